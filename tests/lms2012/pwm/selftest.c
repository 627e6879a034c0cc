/*
 * selftest.c: LEGO's d_pwm (through pwm_host.h) against a simple motor model, fed with
 * tacho edges and their times every 2 ms tick, as the firmware brick's shim will do.
 * Commands are written as the VM's c_output writes them to /dev/lms_pwm (packed structs
 * of lms2012.h; busy bits read back as cOutputTest reads them).
 *
 * Motor model (ours, first order, per port): driven, the speed tends to
 * sign * max(0, duty - deadband) / (1 - deadband) * no-load speed with time constant
 * tau; braked (both DIR pins high) it tends to 0 with the same tau (shorted windings);
 * coasting, only friction slows it (a slower exponential plus a constant deceleration).
 * Optional rigid end stop in the forward direction. 1 degree = 1 tacho edge.
 *
 * Prints a compact table per scenario; exits 1 when a basic expectation of scenario (a)
 * fails (the step job's final count and its busy bits), 2 when the driver cannot start.
 */
#include "pwm_host.h"

#include "lms2012.h" /* LEGO's header at build time: STEPSPEED, TIMESPEED, opcodes, types */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_US 2000
#define SUB_US 20
#define PORTS 4
#define MAX_EDGES 64
#define PA 0x01
#define PB 0x02
#define PC 0x04

/* Virtual time at boot: 1.2 s before the 24-bit timer wraps (2^24 / 134400 Hz = 124.83 s),
 * so the wrap falls in the constant part of scenario (a). */
#define START_US 123630000ull

/* ---- motor model ---- */

typedef struct {
    const char *kind;
    double w_max;     /* deg/s at full duty, no load */
    double tau;       /* s, driven or braked */
    double tau_coast; /* s, coasting */
    double friction;  /* deg/s^2, coasting */
    double deadband;  /* duty fraction that does not move it */
    double pos, vel;  /* deg, deg/s */
    long cnt;         /* whole degrees reported as edges */
    int stop_on;
    double stop_at; /* forward end stop */
} model;

typedef struct {
    uint16_t at;
    int8_t dir;
} edge;

static model large_motor(void) { return (model){"large", 1050, 0.060, 0.25, 400, 0.03, 0, 0, 0, 0, 0}; }
static model medium_motor(void) { return (model){"medium", 1500, 0.025, 0.15, 600, 0.05, 0, 0, 0, 0, 0}; }

static int model_tick(model *m, uint16_t duty, uint8_t drive, edge *out)
{
    int n = 0;
    const double dt = SUB_US * 1e-6;
    for (int s = 0; s < TICK_US / SUB_US; s++) {
        double v0 = m->vel, target = 0, tau = m->tau;
        double d = duty / 10000.0;
        double eff = d > m->deadband ? (d - m->deadband) / (1 - m->deadband) : 0;
        if (drive == PWMHOST_FORWARD)
            target = eff * m->w_max;
        else if (drive == PWMHOST_REVERSE)
            target = -eff * m->w_max;
        else if (drive == PWMHOST_COAST)
            tau = m->tau_coast;
        m->vel = target + (v0 - target) * exp(-dt / tau);
        if (drive == PWMHOST_COAST) {
            double f = m->friction * dt;
            m->vel = fabs(m->vel) <= f ? 0 : m->vel - copysign(f, m->vel);
        }
        double p0 = m->pos;
        m->pos += 0.5 * (v0 + m->vel) * dt;
        if (m->stop_on && m->pos > m->stop_at) {
            m->pos = m->stop_at;
            m->vel = 0;
        }
        long c = (long)floor(m->pos);
        while (c != m->cnt && n < MAX_EDGES) {
            int dir = c > m->cnt ? 1 : -1;
            double level = dir > 0 ? (double)(m->cnt + 1) : (double)m->cnt;
            double frac = m->pos != p0 ? (level - p0) / (m->pos - p0) : 1;
            frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
            m->cnt += dir;
            out[n].at = (uint16_t)((s + frac) * SUB_US);
            out[n].dir = (int8_t)dir;
            n++;
        }
    }
    return n;
}

/* ---- the brick: driver + models in lockstep ---- */

static model M[PORTS];
static uint64_t now_us = START_US;
static MOTORDATA *mem;

static void tick(void)
{
    edge e[PORTS][MAX_EDGES];
    int n[PORTS], k[PORTS] = {0};
    for (int p = 0; p < PORTS; p++) {
        uint16_t duty;
        uint8_t drive;
        pwmhost_output(p, &duty, &drive);
        n[p] = model_tick(&M[p], duty, drive, e[p]);
    }
    for (;;) { /* all ports' edges in time order */
        int best = -1;
        for (int p = 0; p < PORTS; p++)
            if (k[p] < n[p] && (best < 0 || e[p][k[p]].at < e[best][k[best]].at))
                best = p;
        if (best < 0)
            break;
        pwmhost_set_timer_us(now_us + e[best][k[best]].at);
        pwmhost_edge(best, e[best][k[best]].dir);
        k[best]++;
    }
    now_us += TICK_US;
    pwmhost_set_timer_us(now_us);
    pwmhost_tick();
}

/* how many times the driver's 24-bit timer has wrapped */
static long timer_epoch(void) { return (long)(now_us * PWMHOST_TIMER_HZ / 1000000u >> 24); }

static void run_ms(int ms)
{
    for (int i = 0; i < ms * 1000 / TICK_US; i++)
        tick();
}

static void put(const void *buf, size_t n)
{
    pwmhost_set_timer_us(now_us);
    ssize_t r = pwmhost_pwm_write(buf, n);
    if (r < 0) {
        fprintf(stderr, "selftest: write of %zu bytes refused (%zd)\n", n, r);
        exit(2);
    }
}

static void cmd2(int op, int nos) { DATA8 b[2] = {(DATA8)op, (DATA8)nos}; put(b, sizeof b); }
static void cmd3(int op, int nos, int v) { DATA8 b[3] = {(DATA8)op, (DATA8)nos, (DATA8)v}; put(b, sizeof b); }

static void step_speed(int nos, int speed, int s1, int s2, int s3, int brake)
{
    STEPSPEED m = {opOUTPUT_STEP_SPEED, (DATA8)nos, (DATA8)speed, s1, s2, s3, (DATA8)brake};
    put(&m.Cmd, sizeof m);
}

static void time_speed(int nos, int speed, int t1, int t2, int t3, int brake)
{
    TIMESPEED m = {opOUTPUT_TIME_SPEED, (DATA8)nos, (DATA8)speed, t1, t2, t3, (DATA8)brake};
    put(&m.Cmd, sizeof m);
}

/* cOutputTest's read: 10 bytes, "%u %u" = ReadyStatus TestStatus */
static void busy(unsigned *ready, unsigned *test, char *text)
{
    char buf[16] = {0};
    pwmhost_pwm_read(buf, 10);
    *ready = *test = 0;
    sscanf(buf, "%u %u", ready, test);
    if (text) {
        snprintf(text, 16, "%s", buf);
        for (char *c = text; *c; c++)
            if (*c == ' ')
                *c = '_';
    }
}

static int busy_bit(int port)
{
    unsigned r, t;
    busy(&r, &t, NULL);
    return (t >> port) & 1;
}

static uint16_t duty_of(int port)
{
    uint16_t d;
    uint8_t dr;
    pwmhost_output(port, &d, &dr);
    return d;
}

static uint8_t drive_of(int port)
{
    uint16_t d;
    uint8_t dr;
    pwmhost_output(port, &d, &dr);
    return dr;
}

static const char *drive_name(uint8_t d)
{
    static const char *names[] = {"coast", "fwd", "rev", "brake"};
    return d < 4 ? names[d] : "?";
}

/* Run until the model stands still (and has for 100 ms) or max_ms pass; ms taken. */
static int settle(int max_ms)
{
    int still = 0, ms = 0;
    while (ms < max_ms && still < 100) {
        run_ms(2);
        ms += 2;
        int moving = 0;
        for (int p = 0; p < PORTS; p++)
            moving |= fabs(M[p].vel) > 0.5;
        still = moving ? 0 : still + 2;
    }
    return ms;
}

static void clean(int nos)
{
    cmd3(opOUTPUT_STOP, nos, 0);
    settle(3000);
    cmd2(opOUTPUT_RESET, nos);
    cmd2(opOUTPUT_CLR_COUNT, nos);
    for (int p = 0; p < PORTS; p++)
        if (nos & (1 << p))
            mem[p].TachoSensor = 0; /* c_output clears it in the shared memory too */
}

/* ---- checks ---- */

static int failures;

static void expect(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  [%s] ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!ok)
        failures++;
}

/* The pin hooks: each port's drive as its own DIR0/DIR1 pins say, whatever the other
 * ports do (on EP2, A's DIR0 and DIR1 and B's DIR0 share one GPIO register set, C's DIR1
 * and D's DIR0 and DIR1 another). */
static void scenario_pins(void)
{
    printf("(p) drive per port from the DIR0/DIR1 pins\n");
    int init_ok = 1;
    for (int p = 0; p < PORTS; p++)
        init_ok &= drive_of(p) == PWMHOST_COAST && duty_of(p) == 0;
    expect(init_ok, "after boot every port coasts with duty 0");
    cmd3(opOUTPUT_SPEED, PA, 30);
    cmd3(opOUTPUT_SPEED, PC, -30);
    cmd2(opOUTPUT_START, PA | PC);
    cmd3(opOUTPUT_STOP, PB, 1);
    run_ms(100);
    uint8_t a = drive_of(0), b = drive_of(1), c = drive_of(2), d = drive_of(3);
    expect(a == PWMHOST_FORWARD && b == PWMHOST_BRAKE && c == PWMHOST_REVERSE && d == PWMHOST_COAST,
           "A speed 30, B stopped with brake, C speed -30, D none: %s %s %s %s", drive_name(a),
           drive_name(b), drive_name(c), drive_name(d));
    expect(duty_of(0) > 0 && duty_of(1) == 0 && duty_of(2) > 0 && duty_of(3) == 0,
           "duty A %u, B %u, C %u, D %u", duty_of(0), duty_of(1), duty_of(2), duty_of(3));
    expect(M[0].vel > 0 && M[2].vel < 0, "the models turn: A %.0f deg/s, C %.0f deg/s", M[0].vel,
           M[2].vel);
    cmd3(opOUTPUT_STOP, PA, 0);
    run_ms(4);
    a = drive_of(0), b = drive_of(1), c = drive_of(2);
    expect(a == PWMHOST_COAST && b == PWMHOST_BRAKE && c == PWMHOST_REVERSE,
           "after STOP coast of A: %s %s %s", drive_name(a), drive_name(b), drive_name(c));
    cmd3(opOUTPUT_STOP, PA | PB | PC, 0);
    settle(3000);
}

/* (a) STEP_SPEED 360 deg at 50, ramps 30/300/30, brake: the basic case. */
static void scenario_a(void)
{
    char text[16];
    unsigned r, t;
    printf("(a) port A large: STEP_SPEED speed 50, steps 30/300/30, brake\n");
    clean(PA);
    double start = (double)M[0].cnt; /* the model's degree at count 0 */
    step_speed(PA, 50, 30, 300, 30, 1);
    busy(&r, &t, text);
    expect((r & 1) && (t & 1), "busy bits right after the write: read \"%s\"", text);

    int ms = 0, end_ms = -1, others_driven = 0;
    double spd_sum = 0;
    int spd_n = 0, spd_min = 127, spd_max = -128;
    int up_ms = -1, down_ms = -1;
    long wrap_count = -1, epoch0 = timer_epoch();
    char up[700] = "", down[900] = "";
    while (ms < 5000 && end_ms < 0) {
        run_ms(2);
        ms += 2;
        long c = mem[0].TachoSensor;
        uint16_t d = duty_of(0);
        if (c < 30 && ms % 8 == 2 && strlen(up) < sizeof up - 24)
            snprintf(up + strlen(up), sizeof up - strlen(up), " %ld:%u:%d", c, d, mem[0].Speed);
        if (c >= 330 && strlen(down) < sizeof down - 24)
            snprintf(down + strlen(down), sizeof down - strlen(down), " %ld:%u:%d", c, d,
                     mem[0].Speed);
        if (up_ms < 0 && c >= 30)
            up_ms = ms;
        if (down_ms < 0 && c >= 330)
            down_ms = ms;
        if (c >= 60 && c < 300) {
            int s = mem[0].Speed;
            spd_sum += s;
            spd_n++;
            spd_min = s < spd_min ? s : spd_min;
            spd_max = s > spd_max ? s : spd_max;
        }
        for (int p = 1; p < PORTS; p++)
            others_driven |= duty_of(p) != 0;
        if (wrap_count < 0 && timer_epoch() != epoch0)
            wrap_count = c;
        if (!busy_bit(0))
            end_ms = ms;
    }
    printf("  ramp-up count:duty:speed every 4th tick (count < 30):%s\n", up);
    printf("  ramp-down count:duty:speed per tick (count >= 330):%s\n", down);
    printf("  t(count 30) = %d ms, t(count 330) = %d ms, busy cleared at %d ms; the 24-bit timer "
           "wrapped at count %ld\n",
           up_ms, down_ms, end_ms, wrap_count);
    long at_end = mem[0].TachoSensor;
    run_ms(500);
    busy(&r, &t, text);
    long held = mem[0].TachoSensor;
    printf("  count at busy clear %ld, 500 ms later %ld (model %.1f deg), drive %s duty %u\n",
           at_end, held, M[0].pos - start, drive_name(drive_of(0)), duty_of(0));
    expect(end_ms > 0, "busy cleared at the end of the job (after %d ms)", end_ms);
    expect(!(r & 1) && !(t & 1), "busy bits after the job: read \"%s\"", text);
    expect(held >= 358 && held <= 362, "final count %ld within 360 +/- 2", held);
    expect(spd_n > 0 && fabs(spd_sum / spd_n - 50) <= 3,
           "speed in the constant part (count 60..300): mean %.1f, min %d, max %d",
           spd_n ? spd_sum / spd_n : 0.0, spd_min, spd_max);
    expect(!others_driven, "ports B..D got no duty while A ran (SetDuty[] per port)");

    printf("(a2) port A large: STEP_SPEED speed -30, steps 10/70/10, brake (backward)\n");
    cmd2(opOUTPUT_CLR_COUNT, PA);
    mem[0].TachoSensor = 0;
    step_speed(PA, -30, 10, 70, 10, 1);
    int saw_rev = 0;
    for (ms = 0; ms < 4000 && busy_bit(0); ms += 2) {
        run_ms(2);
        saw_rev |= drive_of(0) == PWMHOST_REVERSE;
    }
    run_ms(500);
    expect(saw_rev && !busy_bit(0) && labs(mem[0].TachoSensor + 90) <= 2,
           "backward job: drive reverse seen, ended after %d ms, count %ld (expect -90)", ms,
           (long)mem[0].TachoSensor);
}

/* (b) TIME_SPEED: 100/600/100 ms at 50 with brake, and the homing form 0/600/0. */
static void scenario_b(int t1, int t2, int t3)
{
    printf("(b) port B large: TIME_SPEED speed 50, times %d/%d/%d ms, brake\n", t1, t2, t3);
    clean(PB);
    time_speed(PB, 50, t1, t2, t3, 1);
    int ms = 0, end_ms = -1, n = 0;
    double sum = 0;
    while (ms < 3000 && end_ms < 0) {
        run_ms(2);
        ms += 2;
        if (ms > t1 + 100 && ms <= t1 + t2) {
            sum += mem[1].Speed;
            n++;
        }
        if (!busy_bit(1))
            end_ms = ms;
    }
    long c_end = mem[1].TachoSensor;
    run_ms(500);
    printf("  busy cleared at %d ms (asked %d), count then %ld, 500 ms later %ld, mean speed "
           "%.1f in the constant part\n",
           end_ms, t1 + t2 + t3, c_end, (long)mem[1].TachoSensor, n ? sum / n : 0.0);
}

/* (c) OUTPUT_STOP brake vs coast after running regulated at speed 50. */
static void scenario_c(int brake)
{
    printf("(c) port A large: SPEED 50 + START for 600 ms, then STOP %s\n", brake ? "brake" : "coast");
    clean(PA);
    cmd3(opOUTPUT_SPEED, PA, 50);
    cmd2(opOUTPUT_START, PA);
    run_ms(600);
    long c0 = mem[0].TachoSensor;
    double v0 = M[0].vel, p0 = M[0].pos;
    cmd3(opOUTPUT_STOP, PA, brake);
    int ms = 0, still_ms = -1, still_since = -1;
    double peak = 0;
    while (ms < 1500) {
        run_ms(2);
        ms += 2;
        double moved = M[0].pos - p0;
        peak = moved > peak ? moved : peak;
        still_since = fabs(M[0].vel) < 1 ? (still_since < 0 ? ms : still_since) : -1;
        if (still_ms < 0 && still_since >= 0 && ms - still_since >= 50)
            still_ms = still_since;
    }
    printf("  at stop: %.0f deg/s, count %ld; still (for 50 ms) after %d ms; furthest %.1f deg past "
           "the stop point, after 1.5 s %ld deg past (drive %s, duty %u)\n",
           v0, c0, still_ms, peak, (long)mem[0].TachoSensor - c0, drive_name(drive_of(0)),
           duty_of(0));
}

/* (d) audit B1: POLARITY after a job ended with coast (B forward, C backward), and again
 * after the stop_all coast and a PROGRAM_STOP. */
static void polarity_then_watch(const char *when)
{
    long b0 = mem[1].TachoSensor, c0 = mem[2].TachoSensor;
    cmd3(opOUTPUT_POLARITY, PB | PC, 1);
    uint16_t db = duty_of(1), dc = duty_of(2);
    uint8_t rb = drive_of(1), rc = drive_of(2);
    run_ms(1000);
    unsigned r, t;
    busy(&r, &t, NULL);
    printf("  POLARITY 1 %s: duty B %u (%s), C %u (%s); 1 s later B moved %ld deg (%.0f deg/s), "
           "C %ld deg (%.0f deg/s), busy bits %u %u\n",
           when, db, drive_name(rb), dc, drive_name(rc), (long)mem[1].TachoSensor - b0, M[1].vel,
           (long)mem[2].TachoSensor - c0, M[2].vel, r, t);
}

static void scenario_d(void)
{
    printf("(d) B1: B large STEP_SPEED 40, C medium STEP_SPEED -40, both 0/90/0 with coast\n");
    clean(PB | PC);
    step_speed(PB, 40, 0, 90, 0, 0);
    step_speed(PC, -40, 0, 90, 0, 0);
    for (int ms = 0; ms < 3000 && (busy_bit(1) || busy_bit(2)); ms += 2)
        run_ms(2);
    settle(3000);
    printf("  jobs ended, coasted to rest: counts B %ld C %ld, duty B %u C %u, drive B %s C %s\n",
           (long)mem[1].TachoSensor, (long)mem[2].TachoSensor, duty_of(1), duty_of(2),
           drive_name(drive_of(1)), drive_name(drive_of(2)));
    polarity_then_watch("after the jobs");
    cmd3(opOUTPUT_STOP, PB | PC, 0);
    settle(3000);
    DATA8 stop = opPROGRAM_STOP;
    put(&stop, 1);
    run_ms(200);
    polarity_then_watch("after STOP coast + PROGRAM_STOP");
    cmd3(opOUTPUT_STOP, PB | PC, 0);
    settle(3000);
}

/* (e) audit B2: START right after STEP_SPEED, and START once the job has ended. */
static void scenario_e(void)
{
    printf("(e1) port A large: STEP_SPEED 50, 0/9/0, brake + START at once\n");
    clean(PA);
    step_speed(PA, 50, 0, 9, 0, 1);
    cmd2(opOUTPUT_START, PA);
    int ms;
    for (ms = 0; ms < 2000 && busy_bit(0); ms += 2)
        run_ms(2);
    run_ms(500);
    printf("  job ended after %d ms; 500 ms later count %ld, duty %u (%s)\n", ms,
           (long)mem[0].TachoSensor, duty_of(0), drive_name(drive_of(0)));

    static const int ports[] = {0, 2};
    for (int i = 0; i < 2; i++) {
        int p = ports[i], nos = 1 << p;
        printf("(e2) port %c %s: STEP_SPEED 50, 0/9/0, brake; START after the job ended\n", 'A' + p,
               M[p].kind);
        clean(nos);
        step_speed(nos, 50, 0, 9, 0, 1);
        for (ms = 0; ms < 2000 && busy_bit(p); ms += 2)
            run_ms(2);
        run_ms(100);
        long c0 = mem[p].TachoSensor;
        cmd2(opOUTPUT_START, nos);
        run_ms(4);
        uint16_t d = duty_of(p);
        uint8_t dr = drive_of(p);
        run_ms(1000);
        printf("  job ended after %d ms at count %ld; START: duty %u (%s), busy %d; 1 s later "
               "moved %ld deg (%.0f deg/s)\n",
               ms, c0, d, drive_name(dr), busy_bit(p), (long)mem[p].TachoSensor - c0, M[p].vel);
        cmd3(opOUTPUT_STOP, nos, 0);
        settle(3000);
    }
}

/* (f) audit B3: a step job held 2 degrees short by an end stop. */
static void scenario_f(void)
{
    printf("(f) B3: port B large, end stop at 88 deg: STEP_SPEED 30, 10/70/10, brake\n");
    clean(PB);
    M[1].stop_on = 1;
    M[1].stop_at = (double)M[1].cnt + 88.5; /* count 88 reachable, 89 not */
    step_speed(PB, 30, 10, 70, 10, 1);
    printf("  t(ms):");
    char duties[300] = "";
    int full_ms = -1;
    for (int ms = 2; ms <= 3000; ms += 2) {
        run_ms(2);
        if (full_ms < 0 && duty_of(1) >= 10000)
            full_ms = ms;
        if (ms % 250 == 0) {
            printf(" %5d", ms);
            snprintf(duties + strlen(duties), sizeof duties - strlen(duties), " %5u", duty_of(1));
        }
    }
    printf("\n  duty :%s\n  duty reached 10000 at %d ms\n", duties, full_ms);
    unsigned r, t;
    busy(&r, &t, NULL);
    printf("  after 3 s: count %ld, busy bits %u %u, drive %s\n", (long)mem[1].TachoSensor, r, t,
           drive_name(drive_of(1)));
    cmd3(opOUTPUT_STOP, PB, 1);
    run_ms(100);
    printf("  STOP brake: busy bits now %d\n", busy_bit(1));
    M[1].stop_on = 0;
    clean(PB);
}

/* (g) audit B5: ramp-down shape and floor, the turntable's move (55 %, ramps 30/45) and a
 * 9-degree mark with no ramps (the crawl before the brake). */
static void scenario_g(int port, int speed, int up, int cnst, int down)
{
    int nos = 1 << port, total = up + cnst + down;
    printf("(g) B5: port %c %s: STEP_SPEED %d, %d/%d/%d, brake\n", 'A' + port, M[port].kind, speed,
           up, cnst, down);
    clean(nos);
    step_speed(nos, speed, up, cnst, down, 1);
    int ms = 0, t_down = -1, t_last10 = -1, t_end = -1;
    char prof[700] = "";
    while (ms < 4000 && t_end < 0) {
        run_ms(2);
        ms += 2;
        long c = mem[port].TachoSensor;
        if (t_down < 0 && c >= up + cnst)
            t_down = ms;
        if (t_last10 < 0 && c >= total - 10)
            t_last10 = ms;
        if (c >= up + cnst - 2 && strlen(prof) < sizeof prof - 16)
            snprintf(prof + strlen(prof), sizeof prof - strlen(prof), " %ld:%d", c,
                     mem[port].Speed);
        if (!busy_bit(port))
            t_end = ms;
    }
    double v_end = M[port].vel, target = M[port].pos - (double)mem[port].TachoSensor + total;
    double past = 0;
    int still = -1, since = -1;
    for (int q = 2; q <= 600; q += 2) {
        run_ms(2);
        past = M[port].pos - target > past ? M[port].pos - target : past;
        since = fabs(M[port].vel) < 1 ? (since < 0 ? q : since) : -1;
        if (still < 0 && since >= 0 && q - since >= 50)
            still = since;
    }
    printf("  count:speed per tick from count %d:%s\n", up + cnst - 2, prof);
    printf("  ramp-down (last %d counts) %d ms, last 10 counts %d ms, job %d ms, %.0f deg/s at "
           "the end; then up to %.1f deg past, still (for 50 ms) %d ms later, final count %ld\n",
           down, t_down >= 0 ? t_end - t_down : -1, t_last10 >= 0 ? t_end - t_last10 : -1, t_end,
           v_end, past, still, (long)mem[port].TachoSensor);
}

int main(void)
{
    if (pwmhost_init() != 0) {
        fprintf(stderr, "selftest: pwmhost_init failed\n");
        return 2;
    }
    size_t len;
    mem = pwmhost_motor_mem(&len);
    if (!mem || len != sizeof(MOTORDATA) * OUTPUTS) {
        fprintf(stderr, "selftest: no motor memory\n");
        return 2;
    }
    M[0] = large_motor();
    M[1] = large_motor();
    M[2] = medium_motor();
    M[3] = large_motor();

    /* as the VM starts: c_output's OutputReset + PROGRAM_START, then c_input's SET_TYPE */
    run_ms(10);
    cmd3(opOUTPUT_STOP, 0x0F, 0);
    DATA8 start = opPROGRAM_START;
    put(&start, 1);
    DATA8 types[5] = {opOUTPUT_SET_TYPE, TYPE_TACHO, TYPE_TACHO, TYPE_MINITACHO, TYPE_NONE};
    put(types, sizeof types);
    run_ms(10);
    printf("d_pwm self-test: timer %u Hz (24-bit wrap at %.3f s, boot at %.3f s), HwId %s; A "
           "large, B large, C medium, D none\n",
           PWMHOST_TIMER_HZ, 16777216.0 / PWMHOST_TIMER_HZ, START_US / 1e6, PWMHOST_HWID);

    scenario_pins();
    scenario_a();
    scenario_b(100, 600, 100);
    scenario_b(0, 600, 0);
    scenario_c(1);
    scenario_c(0);
    scenario_d();
    scenario_e();
    scenario_f();
    scenario_g(1, 55, 30, 195, 45);
    scenario_g(0, 45, 0, 9, 0);

    printf("%s: %d basic expectation(s) failed\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
