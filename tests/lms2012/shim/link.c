/*
 * The world link: the brick's side of the SOCK_SEQPACKET socket to cubot.
 *
 * One datagram per message, [kind: u8][payload], integers little-endian, no padding.
 *   cubot -> brick: 'C' CONFIG (first, once), 'F' FRAME, 'R' RUN, 'W' WORLD (answers a TICK),
 *                   'Q' QUIT.
 *   brick -> cubot: 'B' BOOTED, 'T' TICK, 'P' REPLY, 'I' IDLE, 'L' LOG.
 * The brick never reads the socket except when it has to wait: for the WORLD that answers
 * its TICK, or for a RUN when its clock has reached the end of the last grant. Whatever
 * arrives while it waits is taken in order (frames queue for the USB device, a RUN moves the
 * limit, QUIT ends the process), so cubot may send at any time and never waits on the brick
 * except for its answers.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include "brick.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct brick_config brick_cfg;
uint64_t link_run_until = UINT64_MAX;

static int link_fd = -1;
static int run_answered = 1; /* IDLE (or BOOTED) already told cubot the current grant is used */
static int booted;
static uint64_t early_until; /* a RUN that came before BOOTED: where to stop after boot */

/* Largest message: a FRAME of a 64 KiB system command, or a WORLD full of edges. */
static uint8_t rx[70000];

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t get_u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

/* A broken link leaves the brick nothing to do: whoever drove it is gone. */
static void link_lost(const char *why)
{
    fprintf(stderr, "cubot-brick: world link %s; exiting\n", why);
    _exit(3);
}

void link_send(char kind, const void *payload, size_t n)
{
    static uint8_t tx[sizeof rx];
    if (link_fd < 0 || n + 1 > sizeof tx)
        return;
    tx[0] = (uint8_t)kind;
    memcpy(tx + 1, payload, n);
    ssize_t sent;
    do
        sent = send(link_fd, tx, n + 1, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0)
        link_lost(strerror(errno));
}

void link_send_at(char kind, uint64_t t_us, const void *data, size_t n)
{
    uint8_t buf[8 + 2048];
    if (n > sizeof buf - 8)
        n = sizeof buf - 8;
    put_u64(buf, t_us);
    if (n)
        memcpy(buf + 8, data, n);
    link_send(kind, buf, 8 + n);
}

static void vlog(const char *fmt, va_list ap)
{
    char text[512];
    int n = vsnprintf(text, sizeof text, fmt, ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof text)
        n = sizeof text - 1;
    if (link_fd >= 0)
        link_send('L', text, (size_t)n);
    else
        fprintf(stderr, "cubot-brick: %s\n", text);
}

void link_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void link_log_once(int *said, const char *fmt, ...)
{
    if (*said)
        return;
    *said = 1;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

static size_t receive(void)
{
    ssize_t n;
    do
        n = recv(link_fd, rx, sizeof rx, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        link_lost(strerror(errno));
    if (n == 0)
        link_lost("closed by cubot");
    return (size_t)n;
}

static void parse_world(const uint8_t *p, size_t n, struct world *w)
{
    size_t at = 0;
    for (int port = 0; port < BRICK_PORTS; port++) {
        if (at + 1 > n)
            goto short_world;
        uint8_t count = p[at++];
        if (at + 4u * count > n)
            goto short_world;
        w->edges[port] = count;
        for (int i = 0; i < count; i++, at += 4) {
            w->edge[port][i].at_us = get_u16(p + at);
            w->edge[port][i].dir = (int8_t)p[at + 2];
        }
    }
    for (int port = 0; port < BRICK_PORTS; port++, at += 10) {
        if (at + 10 > n)
            goto short_world;
        w->sensor[port].mode = p[at];
        w->sensor[port].flags = p[at + 1];
        for (int i = 0; i < 4; i++)
            w->sensor[port].value[i] = (int16_t)get_u16(p + at + 2 + 2 * i);
    }
    return;
short_world:
    link_lost("sent a WORLD too short for its edge counts");
}

/* Takes one message that is not the awaited kind: FRAME, RUN, QUIT. Returns the kind. */
static char dispatch(size_t n, struct world *world)
{
    char kind = (char)rx[0];
    const uint8_t *p = rx + 1;
    n--;
    switch (kind) {
    case 'F':
        usb_queue_frame(p, n);
        break;
    case 'R':
        if (n < 8)
            link_lost("sent a short RUN");
        if (!booted) {
            /* Boot runs free; a grant before BOOTED only says how far to go after it. */
            early_until = get_u64(p);
            break;
        }
        link_run_until = get_u64(p);
        if (link_run_until <= vclock_now_us) {
            link_run_until = vclock_now_us; /* a grant in the past: time never goes back */
            link_send_at('I', vclock_now_us, NULL, 0);
            run_answered = 1;
        } else {
            run_answered = 0;
        }
        break;
    case 'W':
        if (!world)
            link_lost("sent a WORLD that answers no TICK");
        parse_world(p, n, world);
        break;
    case 'Q':
        _exit(0);
    default:
        link_log("ignored a message of unknown kind 0x%02x", (unsigned)(uint8_t)kind);
    }
    return kind;
}

void link_tick(const void *tick, size_t n, struct world *answer)
{
    link_send('T', tick, n);
    while (dispatch(receive(), answer) != 'W')
        ;
}

void link_wait_for_run(void)
{
    while (vclock_now_us >= link_run_until) {
        if (!run_answered) {
            link_send_at('I', vclock_now_us, NULL, 0);
            run_answered = 1;
        }
        dispatch(receive(), NULL);
    }
}

void link_booted(const char *version)
{
    /* Cubot learns the brick is ready and grants time from here on; a RUN it sent early
     * (while the brick booted) already counts. */
    booted = 1;
    link_send_at('B', vclock_now_us, version, strlen(version));
    link_run_until = early_until > vclock_now_us ? early_until : vclock_now_us;
    run_answered = link_run_until <= vclock_now_us;
}

void link_start(void)
{
    const char *fd_text = getenv("CUBOT_BRICK_FD");
    char *end = NULL;
    long fd = fd_text ? strtol(fd_text, &end, 10) : -1;
    if (!fd_text || !*fd_text || *end || fd < 0) {
        fprintf(stderr, "cubot-brick: CUBOT_BRICK_FD must name the world link's socket (a file "
                        "descriptor number); run the VM through cubot or the test client\n");
        _exit(2);
    }
    link_fd = (int)fd;
    size_t n = receive();
    if (rx[0] != 'C')
        link_lost("did not start with CONFIG");
    const uint8_t *p = rx + 1;
    if (n - 1 < 64 || get_u32(p) != 1)
        link_lost("sent a CONFIG of another version or size");
    memcpy(brick_cfg.out_type, p + 4, BRICK_PORTS);
    memcpy(brick_cfg.in_type, p + 8, BRICK_PORTS);
    brick_cfg.battery_mv = get_u32(p + 12);
    brick_cfg.tick_us = get_u32(p + 16);
    brick_cfg.round_us = get_u32(p + 20);
    brick_cfg.seed = get_u64(p + 24);
    memcpy(brick_cfg.name, p + 32, 32);
    brick_cfg.name[32] = 0;
    if (brick_cfg.tick_us == 0 || brick_cfg.round_us == 0)
        link_lost("sent a CONFIG with a zero tick or round time");
}
