/*
 * brick-check: boots the firmware brick the way cubot does and checks a few direct commands,
 * without any of cubot's Rust side. Built by scripts/firmware-brick.sh into
 * target/lms2012/bin/brick-check.
 *
 *   brick-check [-v] [--round-us N] [--switch-ms N] [LMS2012_DIR]
 *
 * It makes a SOCK_SEQPACKET socketpair, copies root/ into a temporary folder, starts
 * bin/lms2012 there with the shim preloaded, and sends CONFIG: large motors on A and B, a
 * medium motor on C, the colour sensor on port 2, the IR sensor on port 4, 8100 mV. It plays
 * a tiny world: no motor ever turns (no edges), the colour sensor answers a mode request
 * after --switch-ms (30) and sends fixed RGB-RAW values in mode 4, the IR sensor sends a
 * proximity of 55. Every reply is printed in hex with its virtual time; any reply that is
 * not what a brick must answer makes the exit status 1 (2: the brick could not be run).
 * Then it measures boot time, speed (wall time per virtual second idle and busy) and the NOP
 * round trip.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The colour sensor's RGB-RAW sample in this world, and its reflected light in mode 0. */
static const int16_t RGB[3] = {301, 402, 503};
#define REFLECT 37
#define IR_PROXIMITY 55
#define BATTERY_MV 8100
#define COLOUR_PORT 1 /* input port 2 */
#define IR_PORT 3     /* input port 4 */

static int verbose;
static int failures;
static uint32_t round_us = 50;
static uint64_t switch_us = 30000;

/* ---- the brick process and the link ---- */

static int link_fd = -1;
static pid_t vm_pid;
static char tmpdir[PATH_MAX];
static uint64_t brick_now; /* the brick's clock as its last message said */

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("MISMATCH: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

static void cleanup(void)
{
    if (vm_pid > 0) {
        kill(vm_pid, SIGKILL);
        waitpid(vm_pid, NULL, 0);
        vm_pid = 0;
    }
    if (tmpdir[0]) {
        char *argv[] = {"rm", "-rf", tmpdir, NULL};
        pid_t p;
        if (posix_spawnp(&p, "rm", NULL, NULL, argv, environ) == 0)
            waitpid(p, NULL, 0);
        tmpdir[0] = 0;
    }
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "brick-check: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (tmpdir[0]) {
        char log[PATH_MAX + 16];
        snprintf(log, sizeof log, "%s/vm.log", tmpdir);
        FILE *f = fopen(log, "r");
        if (f) {
            char line[512];
            fprintf(stderr, "--- the VM's output ---\n");
            while (fgets(line, sizeof line, f))
                fputs(line, stderr);
            fclose(f);
        }
    }
    cleanup();
    exit(2);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}
static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void send_msg(const uint8_t *m, size_t n)
{
    if (send(link_fd, m, n, MSG_NOSIGNAL) != (ssize_t)n)
        die("send to the brick: %s", strerror(errno));
}

static void start_brick(const char *dir)
{
    char root[PATH_MAX], vm[PATH_MAX], shim[PATH_MAX], copy[PATH_MAX + 8];
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(vm, sizeof vm, "%s/bin/lms2012", dir);
    snprintf(shim, sizeof shim, "%s/lib/libcubot_brick.so", dir);
    if (access(vm, X_OK) != 0 || access(shim, R_OK) != 0 || access(root, R_OK) != 0)
        die("no firmware brick in %s: build it with scripts/firmware-brick.sh", dir);

    snprintf(tmpdir, sizeof tmpdir, "/tmp/brick-check.XXXXXX");
    if (!mkdtemp(tmpdir))
        die("mkdtemp: %s", strerror(errno));
    snprintf(copy, sizeof copy, "%s/root", tmpdir);
    char *cp_argv[] = {"cp", "-R", root, copy, NULL};
    pid_t cp;
    int status;
    if (posix_spawnp(&cp, "cp", NULL, NULL, cp_argv, environ) != 0 || waitpid(cp, &status, 0) < 0 ||
        status != 0)
        die("cannot copy %s", root);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        die("socketpair: %s", strerror(errno));
    link_fd = sv[0];
    char log[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/vm.log", tmpdir);

    vm_pid = fork();
    if (vm_pid < 0)
        die("fork: %s", strerror(errno));
    if (vm_pid == 0) {
        /* The child end, not close-on-exec, as fd 3; stdin /dev/null; output to the log. */
        int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
            dup2(sv[1], 3) < 0 || chdir(copy) != 0)
            _exit(127);
        char preload[PATH_MAX + 16];
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim);
        char *envp[] = {preload, "CUBOT_BRICK_FD=3", "PATH=/usr/bin:/bin", NULL};
        char *argv[] = {vm, NULL};
        execve(vm, argv, envp);
        _exit(127);
    }
    close(sv[1]);

    /* CONFIG */
    uint8_t m[65] = {'C'};
    put_u32(m + 1, 1);
    const uint8_t outs[4] = {7, 7, 8, 0}, ins[4] = {0, 29, 0, 33};
    memcpy(m + 5, outs, 4);
    memcpy(m + 9, ins, 4);
    put_u32(m + 13, BATTERY_MV);
    put_u32(m + 17, 2000);
    put_u32(m + 21, round_us);
    put_u64(m + 25, 1);
    memcpy(m + 33, "cubot", 5);
    send_msg(m, sizeof m);
}

/* ---- the world: sensors only, no motion ---- */

static int colour_mode, colour_target = -1;
static uint64_t colour_switch_done;
static uint64_t colour_request_at = UINT64_MAX; /* when the brick last asked for a mode */
static int colour_requested = -1;
static uint64_t ticks;
static uint16_t out_duty[4]; /* what the last TICK said each output drives */
static uint8_t out_drive[4];

static void answer_tick(const uint8_t *t, size_t n)
{
    if (n < 1 + 8 + 12 + 4)
        die("short TICK (%zu bytes)", n);
    uint64_t at = get_u64(t + 1);
    brick_now = at;
    ticks++;
    for (int port = 0; port < 4; port++) {
        out_duty[port] = (uint16_t)(t[9 + 3 * port] | t[10 + 3 * port] << 8);
        out_drive[port] = t[11 + 3 * port];
    }
    const uint8_t *req = t + 1 + 8 + 12;
    if (req[COLOUR_PORT] != 0xFF) {
        colour_target = req[COLOUR_PORT];
        colour_requested = req[COLOUR_PORT];
        colour_request_at = at;
        colour_switch_done = at + switch_us;
    }
    if (colour_target >= 0 && at >= colour_switch_done) {
        colour_mode = colour_target;
        colour_target = -1;
    }
    uint8_t w[1 + 4 + 4 * 10] = {'W'}, *p = w + 1;
    for (int port = 0; port < 4; port++)
        *p++ = 0; /* no edges: nothing turns */
    for (int port = 0; port < 4; port++, p += 10) {
        int16_t v[4] = {0, 0, 0, 0};
        uint8_t mode = 0, flags = 0;
        if (port == COLOUR_PORT) {
            mode = (uint8_t)colour_mode;
            flags = colour_target >= 0 ? 0x02 : 0x01; /* switching: no data */
            if (mode == 4)
                memcpy(v, RGB, sizeof RGB);
            else if (mode == 0)
                v[0] = REFLECT;
        } else if (port == IR_PORT) {
            flags = 0x01;
            v[0] = IR_PROXIMITY;
        }
        p[0] = mode;
        p[1] = flags;
        for (int i = 0; i < 4; i++)
            p[2 + 2 * i] = (uint8_t)v[i], p[3 + 2 * i] = (uint8_t)((uint16_t)v[i] >> 8);
    }
    send_msg(w, sizeof w);
}

/* ---- messages from the brick ---- */

struct reply {
    uint64_t t_us;
    double wall;
    size_t len;
    uint8_t data[1100];
};
#define MAX_REPLIES 16
static struct reply replies[MAX_REPLIES];
static int reply_count;
static int booted, idle;
static uint64_t booted_at;
static double booted_wall;
static char fw_version[32];

/* Takes one message from the brick and deals with it. */
static void pump(void)
{
    static uint8_t m[4096];
    ssize_t n = recv(link_fd, m, sizeof m, 0);
    if (n <= 0) {
        int status = 0;
        if (vm_pid > 0 && waitpid(vm_pid, &status, WNOHANG) == vm_pid)
            vm_pid = 0;
        die("the brick closed the link (VM status %d)", status);
    }
    switch (m[0]) {
    case 'T':
        answer_tick(m, (size_t)n);
        break;
    case 'B':
        booted = 1;
        booted_at = brick_now = get_u64(m + 1);
        booted_wall = wall();
        snprintf(fw_version, sizeof fw_version, "%.*s", (int)(n - 9), (char *)m + 9);
        break;
    case 'I':
        idle = 1;
        brick_now = get_u64(m + 1);
        break;
    case 'P': {
        if (reply_count == MAX_REPLIES)
            die("too many unclaimed replies");
        struct reply *r = &replies[reply_count++];
        r->t_us = brick_now = get_u64(m + 1);
        r->wall = wall();
        r->len = (size_t)n - 9;
        memcpy(r->data, m + 9, r->len);
        break;
    }
    case 'L':
        if (verbose)
            printf("  [brick log] %.*s\n", (int)(n - 1), (char *)m + 1);
        break;
    default:
        die("unknown message kind 0x%02x", m[0]);
    }
}

/* RUN until `until`, answering ticks, until the brick says IDLE. */
static void run_until(uint64_t until)
{
    uint8_t r[9] = {'R'};
    put_u64(r + 1, until);
    idle = 0;
    send_msg(r, sizeof r);
    while (!idle)
        pump();
}

static uint16_t counter = 0x100;

/* Sends a direct command (ops with a reply) with `globals`/`locals` bytes; returns its counter. */
static uint16_t send_command(const uint8_t *ops, size_t n, unsigned globals, unsigned locals)
{
    uint8_t f[1 + 7 + 1024] = {'F'};
    size_t len = 5 + n;
    uint16_t cnt = counter++;
    f[1] = (uint8_t)len, f[2] = (uint8_t)(len >> 8);
    f[3] = (uint8_t)cnt, f[4] = (uint8_t)(cnt >> 8);
    f[5] = 0x00; /* DIRECT_COMMAND_REPLY */
    unsigned mem = locals << 10 | globals;
    f[6] = (uint8_t)mem, f[7] = (uint8_t)(mem >> 8);
    memcpy(f + 8, ops, n);
    send_msg(f, 8 + n);
    return cnt;
}

/* Grants time in 10 ms slices until the reply to `cnt` is there (at most `limit_us`). */
static struct reply wait_reply(uint16_t cnt, uint64_t limit_us)
{
    uint64_t start = brick_now;
    for (;;) {
        for (int i = 0; i < reply_count; i++) {
            struct reply *r = &replies[i];
            if (r->len >= 4 && (r->data[2] | r->data[3] << 8) == cnt) {
                struct reply got = *r;
                memmove(r, r + 1, (size_t)(reply_count - i - 1) * sizeof *r);
                reply_count--;
                return got;
            }
        }
        if (brick_now - start > limit_us)
            die("no reply to command %04x within %.1f s of brick time", cnt, (double)limit_us / 1e6);
        run_until(brick_now + 10000);
    }
}

static void show(const char *what, const struct reply *r, uint64_t sent_at)
{
    printf("%-34s t=%9.3f ms (+%7.3f)  ", what, (double)r->t_us / 1000, (double)(r->t_us - sent_at) / 1000);
    for (size_t i = 0; i < r->len; i++)
        printf("%02x%s", r->data[i], i + 1 < r->len ? " " : "");
    printf("\n");
}

static struct reply command(const char *what, const uint8_t *ops, size_t n, unsigned globals, unsigned locals)
{
    uint64_t at = brick_now;
    uint16_t cnt = send_command(ops, n, globals, locals);
    struct reply r = wait_reply(cnt, 5000000);
    show(what, &r, at);
    size_t want = 5 + globals;
    if (r.len != want)
        fail("%s: reply of %zu bytes, expected %zu", what, r.len, want);
    return r;
}

static void expect_ok(const char *what, const struct reply *r)
{
    if (r->len < 5 || r->data[4] != 0x02)
        fail("%s: status %02x, expected 02 (DIRECT_REPLY)", what, r->len >= 5 ? r->data[4] : 0);
}

static int32_t i32_at(const struct reply *r, size_t global)
{
    const uint8_t *p = r->data + 5 + global;
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* ---- the checks ---- */

static void check_commands(void)
{
    static const uint8_t nop[] = {0x01};
    struct reply r = command("NOP", nop, sizeof nop, 0, 0);
    expect_ok("NOP", &r);

    /* UI_READ GET_FW_VERS, 16 bytes into GV0(0) */
    static const uint8_t fw[] = {0x81, 0x0A, 0x10, 0x60};
    r = command("UI_READ GET_FW_VERS", fw, sizeof fw, 16, 0);
    expect_ok("GET_FW_VERS", &r);
    if (strncmp((char *)r.data + 5, fw_version, 16) != 0)
        fail("GET_FW_VERS says '%.16s', BOOTED said '%s'", (char *)r.data + 5, fw_version);

    /* UI_READ GET_VBATT right after boot: c_ui starts with Vbatt = 9.0 V and first computes
     * it from the battery channel some 650 ms after start (shown, not checked; the check
     * comes later). */
    static const uint8_t vbatt[] = {0x81, 0x01, 0x60};
    r = command("UI_READ GET_VBATT (early)", vbatt, sizeof vbatt, 4, 0);
    expect_ok("GET_VBATT", &r);
    float volts;
    memcpy(&volts, r.data + 5, 4);
    printf("%-34s %.4f V\n", "", volts);

    /* INPUT_DEVICE GET_TYPEMODE on ports 0..3 and 16..19 */
    uint8_t tm[8 * 6];
    const uint8_t ports[8] = {0, 1, 2, 3, 16, 17, 18, 19};
    for (int i = 0; i < 8; i++) {
        uint8_t *p = tm + 6 * i;
        p[0] = 0x99, p[1] = 0x05, p[2] = 0x00, p[3] = ports[i];
        p[4] = (uint8_t)(0x60 | 2 * i), p[5] = (uint8_t)(0x60 | (2 * i + 1));
    }
    r = command("INPUT_DEVICE GET_TYPEMODE x8", tm, sizeof tm, 16, 0);
    expect_ok("GET_TYPEMODE", &r);
    const uint8_t want_type[8] = {126, 29, 126, 33, 7, 7, 8, 126};
    for (int i = 0; i < 8; i++) {
        uint8_t type = r.data[5 + 2 * i], mode = r.data[6 + 2 * i];
        if (type != want_type[i] || mode != 0)
            fail("port %u: type %u mode %u, expected %u mode 0", ports[i], type, mode, want_type[i]);
    }

    /* INPUT_DEVICE READY_RAW port 2 (1), type 29, mode 4, 3 values into GV0(0), GV0(4), GV0(8) */
    static const uint8_t raw[] = {0x99, 0x1C, 0x00, 0x01, 0x81, 0x1D, 0x04, 0x03, 0x60, 0x64, 0x68};
    uint64_t asked = brick_now;
    r = command("INPUT_DEVICE READY_RAW 29/4 (1st)", raw, sizeof raw, 12, 0);
    expect_ok("READY_RAW", &r);
    for (int i = 0; i < 3; i++)
        if (i32_at(&r, 4 * (size_t)i) != RGB[i])
            fail("READY_RAW value %d is %d, the world sent %d", i, i32_at(&r, 4 * (size_t)i), RGB[i]);
    if (colour_requested != 4)
        fail("the brick never asked the colour sensor for mode 4 (last request %d)", colour_requested);
    else if (r.t_us < colour_request_at + switch_us)
        fail("the first READY_RAW answered %.1f ms after the mode request, before the sensor "
             "switched (%.1f ms)", (double)(r.t_us - colour_request_at) / 1000, (double)switch_us / 1000);
    else
        printf("%-34s blocked %.1f ms (mode request at +%.1f ms, switch takes %.1f ms)\n", "",
               (double)(r.t_us - asked) / 1000, (double)(colour_request_at - asked) / 1000,
               (double)switch_us / 1000);
    uint64_t first_block = r.t_us - asked;
    asked = brick_now;
    r = command("INPUT_DEVICE READY_RAW 29/4 (2nd)", raw, sizeof raw, 12, 0);
    expect_ok("READY_RAW again", &r);
    if (r.t_us - asked >= first_block)
        fail("the second READY_RAW (no switch) took as long as the first");

    /* A command sent while another runs waits for it: TIMER_WAIT 500 ms + TIMER_READY, then
     * a NOP sent 100 ms into it. */
    static const uint8_t wait500[] = {0x85, 0x82, 0xF4, 0x01, 0x40, 0x86, 0x40};
    uint64_t t0 = brick_now;
    uint16_t slow = send_command(wait500, sizeof wait500, 0, 4);
    run_until(brick_now + 100000);
    if (reply_count)
        fail("the 500 ms command answered within 100 ms");
    uint64_t t1 = brick_now;
    uint16_t quick = send_command(nop, sizeof nop, 0, 0);
    struct reply a = wait_reply(slow, 5000000);
    show("TIMER_WAIT 500 + TIMER_READY", &a, t0);
    struct reply b = wait_reply(quick, 5000000);
    show("NOP sent 100 ms into it", &b, t1);
    expect_ok("TIMER_WAIT", &a);
    expect_ok("queued NOP", &b);
    if (a.t_us < t0 + 500000)
        fail("the 500 ms timer answered after %.1f ms", (double)(a.t_us - t0) / 1000);
    if (b.t_us < a.t_us)
        fail("the queued NOP answered (%.1f ms) before the running command (%.1f ms)",
             (double)b.t_us / 1000, (double)a.t_us / 1000);

    /* Motor A through LEGO's d_pwm: unregulated power drives forward, a stop brakes or
     * coasts (the TICK's duty and drive; nothing turns in this world). */
    static const uint8_t power[] = {0xA4, 0x00, 0x01, 0x81, 0x32, 0xA6, 0x00, 0x01};
    static const uint8_t brake[] = {0xA3, 0x00, 0x01, 0x01};
    static const uint8_t coast[] = {0xA3, 0x00, 0x01, 0x00};
    static const char *const drive_name[4] = {"coast", "forward", "reverse", "brake"};
    r = command("OUTPUT_POWER A 50 + OUTPUT_START", power, sizeof power, 0, 0);
    expect_ok("OUTPUT_POWER", &r);
    run_until(brick_now + 20000);
    printf("%-34s A: duty %u, %s\n", "", out_duty[0], drive_name[out_drive[0] & 3]);
    if (out_drive[0] != 1 || out_duty[0] == 0)
        fail("motor A after POWER 50 + START: duty %u drive %u, expected forward", out_duty[0], out_drive[0]);
    if (out_duty[1] || out_duty[2] || out_duty[3])
        fail("motors B, C, D have duty %u %u %u, expected 0", out_duty[1], out_duty[2], out_duty[3]);
    r = command("OUTPUT_STOP A brake", brake, sizeof brake, 0, 0);
    run_until(brick_now + 20000);
    printf("%-34s A: duty %u, %s\n", "", out_duty[0], drive_name[out_drive[0] & 3]);
    if (out_drive[0] != 3)
        fail("motor A after STOP brake: drive %u, expected 3 (brake)", out_drive[0]);
    r = command("OUTPUT_STOP A coast", coast, sizeof coast, 0, 0);
    run_until(brick_now + 20000);
    printf("%-34s A: duty %u, %s\n", "", out_duty[0], drive_name[out_drive[0] & 3]);
    if (out_drive[0] != 0)
        fail("motor A after STOP coast: drive %u, expected 0 (coast)", out_drive[0]);

    /* The battery, now that c_ui has measured it. */
    r = command("UI_READ GET_VBATT", vbatt, sizeof vbatt, 4, 0);
    expect_ok("GET_VBATT", &r);
    memcpy(&volts, r.data + 5, 4);
    printf("%-34s %.4f V\n", "", volts);
    float off_mv = volts * 1000.0f - BATTERY_MV;
    if (off_mv > 3.0f || off_mv < -3.0f) /* the battery channel's count is 2.44 mV */
        fail("GET_VBATT %.4f V, CONFIG said %d mV", volts, BATTERY_MV);

    /* The IR sensor on port 4 (3), type 33 mode 0 (IR-PROX, one DATA8 value), once its
     * 1.1 s of "invalid data" after detection have passed (the READY blocks till then). */
    static const uint8_t prox[] = {0x99, 0x1C, 0x00, 0x03, 0x81, 0x21, 0x00, 0x01, 0x60};
    r = command("INPUT_DEVICE READY_RAW 33/0", prox, sizeof prox, 4, 0);
    expect_ok("READY_RAW IR", &r);
    if (i32_at(&r, 0) != IR_PROXIMITY)
        fail("IR proximity %d, the world sent %d", i32_at(&r, 0), IR_PROXIMITY);

    /* An invalid command: MOVE8_8 of a DATA8 constant -128 (LC1 0x80), outside DATA8's
     * range, into GV0(0). (validate.c checks a constant only while no earlier parameter of
     * the opcode has passed, so the constant must be the first parameter to be caught.) */
    static const uint8_t bad[] = {0x30, 0x81, 0x80, 0x60};
    r = command("MOVE8_8 -128 (invalid)", bad, sizeof bad, 4, 0);
    if (r.len < 5 || r.data[4] != 0x04)
        fail("the invalid command got status %02x, expected 04 (DIRECT_REPLY_ERROR)",
             r.len >= 5 ? r.data[4] : 0);
}

/* ---- the figures ---- */

static void measure(void)
{
    /* Idle: 10 s of brick time with nothing to do. */
    uint64_t from = brick_now;
    uint64_t ticks0 = ticks;
    double w0 = wall();
    run_until(brick_now + 10000000);
    double idle_wall = wall() - w0;
    double idle_virtual = (double)(brick_now - from) / 1e6;
    printf("idle: %.1f s of brick time in %.3f s wall: %.1fx real time (%.3f s wall per brick s, %llu ticks)\n",
           idle_virtual, idle_wall, idle_virtual / idle_wall, idle_wall / idle_virtual,
           (unsigned long long)(ticks - ticks0));

    /* Busy: a direct command that counts to 2,000,000 (ADD32 + JR_LT32 per step). */
    static const uint8_t count[] = {
        0x3A, 0x00, 0x40,                                 /* MOVE32_32 0 -> LV0(0) */
        0x12, 0x40, 0x01, 0x40,                           /* ADD32 LV0(0) 1 -> LV0(0) */
        0x66, 0x40, 0x83, 0x80, 0x84, 0x1E, 0x00, 0x81, 0xF3 /* JR_LT32 LV0(0) 2000000, back 13 bytes */
    };
    from = brick_now;
    w0 = wall();
    uint16_t cnt = send_command(count, sizeof count, 0, 4);
    struct reply r = wait_reply(cnt, 600000000);
    double busy_wall = wall() - w0;
    double busy_virtual = (double)(r.t_us - from) / 1e6;
    show("count to 2,000,000", &r, from);
    expect_ok("counting loop", &r);
    printf("busy: %.3f s of brick time in %.3f s wall: %.2fx real time (%.3f s wall per brick s)\n",
           busy_virtual, busy_wall, busy_virtual / busy_wall, busy_wall / busy_virtual);

    /* NOP round trip, 20 times: brick time from FRAME to REPLY, and wall time. */
    static const uint8_t nop[] = {0x01};
    double sum_wall = 0, max_wall = 0;
    uint64_t sum_v = 0, max_v = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t at = brick_now;
        double w = wall();
        cnt = send_command(nop, sizeof nop, 0, 0);
        r = wait_reply(cnt, 1000000);
        double dw = r.wall - w;
        uint64_t dv = r.t_us - at;
        sum_wall += dw, sum_v += dv;
        max_wall = dw > max_wall ? dw : max_wall;
        max_v = dv > max_v ? dv : max_v;
    }
    printf("NOP round trip (20): brick time mean %.3f ms (max %.3f), wall mean %.3f ms (max %.3f)\n",
           (double)sum_v / 20 / 1000, (double)max_v / 1000, sum_wall / 20 * 1000, max_wall * 1000);
}

static void usage(void)
{
    fprintf(stderr, "usage: brick-check [-v] [--round-us N] [--switch-ms N] [LMS2012_DIR]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    char dir[PATH_MAX] = "";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--round-us") == 0 && i + 1 < argc)
            round_us = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--switch-ms") == 0 && i + 1 < argc)
            switch_us = strtoull(argv[++i], NULL, 10) * 1000;
        else if (argv[i][0] == '-' || dir[0])
            usage();
        else
            snprintf(dir, sizeof dir, "%s", argv[i]);
    }
    if (!dir[0]) { /* default: the lms2012 folder this program was built into (bin/..) */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            usage();
        self[n] = 0;
        snprintf(dir, sizeof dir, "%s", dirname(dirname(self)));
    }
    if (round_us == 0)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);

    double w0 = wall();
    start_brick(dir);
    while (!booted)
        pump();
    printf("BOOTED %s at t=%.3f ms of brick time, %.3f s wall (round_us %u)\n", fw_version,
           (double)booted_at / 1000, booted_wall - w0, round_us);

    check_commands();
    measure();

    uint8_t q = 'Q';
    send_msg(&q, 1);
    int status = 0;
    waitpid(vm_pid, &status, 0);
    vm_pid = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("the VM ended with status %d after QUIT", status);
    cleanup();
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
