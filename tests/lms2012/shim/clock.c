/*
 * Virtual time: the brick's clock is a counter, not the host's clock.
 *
 * The VM's only clocks are gettimeofday (c_timer.c) and, in a few places, clock_gettime and
 * time; all of them read `vclock_now_us` here, counted from 0 at exec as a brick's clock is
 * after boot. Nothing reads the real clock, so a run is deterministic and as fast as the host
 * can compute it.
 *
 * Time moves only when the VM sleeps. On x86 its scheduler calls usleep(1) once per round
 * and usleep(10) every 10 ms of its own time; each sleep costs max(asked, round_us), so a
 * round costs `round_us` of virtual time whatever the host spent on it: a VM busy in
 * bytecode does not move time within a round, it only makes the round take longer on the host.
 *
 * Every multiple of tick_us that time crosses is one tick of LEGO's motor driver, run here in
 * order (tick_at): the tacho edges the world reported for the previous tick go to d_pwm's
 * interrupt handler at their own instants, then d_pwm's 2 ms timer callback runs, the sensors'
 * latest data goes into the UART memory, and cubot gets a TICK (duty and drive per motor, mode
 * requests per sensor) and answers with the WORLD for the tick that starts now.
 * After BOOTED, time may only move up to the end of cubot's last RUN grant; there the brick
 * says IDLE and waits (link_wait_for_run).
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include "brick.h"
#include "pwm_host.h"

#include <errno.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

uint64_t vclock_now_us;

/* The world's answer to the previous TICK: its edges are applied at the start of the next
 * tick, its sensor data written at every tick until the next answer replaces it. */
static struct world last_world;
static uint64_t last_tick_us; /* start of the tick `last_world` describes */
static int have_world;

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }

/* Step 1: the edges of the previous tick, all ports merged in time order, each at its own
 * instant on d_pwm's free-running timer (d_pwm derives speed from those timestamps). */
static void apply_edges(void)
{
    struct {
        uint16_t at;
        int8_t dir;
        uint8_t port;
    } all[BRICK_PORTS * WORLD_MAX_EDGES], e;
    int n = 0;
    for (int port = 0; port < BRICK_PORTS; port++)
        for (int i = 0; i < last_world.edges[port]; i++) {
            e.at = last_world.edge[port][i].at_us;
            e.dir = last_world.edge[port][i].dir;
            e.port = (uint8_t)port;
            /* insertion keeps equal instants in port order; a tick has a few edges */
            int j = n++;
            while (j > 0 && all[j - 1].at > e.at) {
                all[j] = all[j - 1];
                j--;
            }
            all[j] = e;
        }
    for (int i = 0; i < n; i++) {
        pwmhost_set_timer_us(last_tick_us + all[i].at);
        pwmhost_edge(all[i].port, all[i].dir >= 0 ? 1 : -1);
    }
}

/* One tick at t = k * tick_us, in the order a brick's hardware would see it. */
static void tick_at(uint64_t t)
{
    if (have_world)
        apply_edges();
    pwmhost_set_timer_us(t);
    pwmhost_tick();
    if (have_world)
        ports_sensor_data(&last_world);
    sound_update(t);

    uint8_t tick[8 + 3 * BRICK_PORTS + BRICK_PORTS], *p = tick;
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(t >> (8 * i));
    for (int port = 0; port < BRICK_PORTS; port++, p += 3) {
        uint16_t duty = 0;
        uint8_t drive = 0;
        pwmhost_output(port, &duty, &drive);
        put_u16(p, duty);
        p[2] = drive;
    }
    ports_take_mode_requests(p);
    link_tick(tick, sizeof tick, &last_world);
    last_tick_us = t;
    have_world = 1;
}

void vclock_sleep(uint64_t us)
{
    if (us < brick_cfg.round_us)
        us = brick_cfg.round_us;
    uint64_t target = vclock_now_us + us;
    while (vclock_now_us < target) {
        uint64_t next_tick = (vclock_now_us / brick_cfg.tick_us + 1) * brick_cfg.tick_us;
        uint64_t stop = target < next_tick ? target : next_tick;
        if (stop > link_run_until)
            stop = link_run_until;
        vclock_now_us = stop;
        if (stop == next_tick)
            tick_at(stop);
        if (vclock_now_us >= link_run_until)
            link_wait_for_run();
    }
}

/* ---- the libc clock and sleep calls ---- */

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    struct timeval *volatile out = tv; /* glibc declares tv nonnull; callers may still pass NULL */
    (void)tz;
    if (out) {
        out->tv_sec = (time_t)(vclock_now_us / 1000000);
        out->tv_usec = (suseconds_t)(vclock_now_us % 1000000);
    }
    return 0;
}

/* Every clock id is the same virtual clock: realtime, monotonic, process CPU time alike. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    (void)id;
    ts->tv_sec = (time_t)(vclock_now_us / 1000000);
    ts->tv_nsec = (long)(vclock_now_us % 1000000 * 1000);
    return 0;
}

time_t time(time_t *t)
{
    time_t now = (time_t)(vclock_now_us / 1000000);
    if (t)
        *t = now;
    return now;
}

int usleep(useconds_t us)
{
    vclock_sleep(us);
    return 0;
}

static uint64_t timespec_us(const struct timespec *d)
{
    if (d->tv_sec < 0 || d->tv_nsec < 0)
        return 0;
    return (uint64_t)d->tv_sec * 1000000 + (uint64_t)d->tv_nsec / 1000;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!req || req->tv_nsec >= 1000000000) {
        errno = EINVAL;
        return -1;
    }
    vclock_sleep(timespec_us(req));
    if (rem)
        memset(rem, 0, sizeof *rem);
    return 0;
}

int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
    (void)id;
    uint64_t us = timespec_us(req);
    if (flags & TIMER_ABSTIME)
        us = us > vclock_now_us ? us - vclock_now_us : 0;
    vclock_sleep(us);
    if (rem)
        memset(rem, 0, sizeof *rem);
    return 0;
}

unsigned int sleep(unsigned int seconds)
{
    vclock_sleep((uint64_t)seconds * 1000000);
    return 0;
}
