/*
 * The libc calls through which the VM meets the machine, and the shim's start.
 *
 * Device files: open() of a /dev/lms_* name gives a real file descriptor (an empty memfd,
 * so numbers never collide and close() just works) that this file remembers as that device;
 * read, write, ioctl, mmap and select on it are answered by the device's part of the shim.
 * Each device has one block of memory that every mmap() of it returns, as every open of a
 * kernel module's device shares the module's memory.
 *
 * The sandbox: the VM is a program written for a brick, and on a PC some of its habits would
 * reach the host. Files: only its own tree (the private copy of root/ it was started in)
 * exists, besides our devices, /dev/null and /dev/urandom; the VM probes /sys for
 * daisy-chained bricks, /dev/fb0, /dev/i2c-1, mount tables, and a direct or system command
 * may name any path. system() and popen() refuse (it would insmod Wi-Fi modules, reboot,
 * set the USB mode); sethostname() (SET_BRICKNAME) and syslog do nothing but log; uname()
 * says what a brick says; the terminal that c_ui's debug console wants on stdin exists.
 *
 * Start (shim_start, before main): take the world link and CONFIG, step into sys/ (the VM's
 * relative paths, "../prjs", "../sys/settings", assume it runs in lms2012/sys), write the
 * brick's name where c_com reads it, set up ports, motors and the boot probe.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include "brick.h"
#include "pwm_host.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <termios.h>
#include <unistd.h>

enum dev { DEV_PWM, DEV_MOTOR, DEV_ANALOG, DEV_UART, DEV_DCM, DEV_IIC, DEV_UI, DEV_POWER,
           DEV_SOUND, DEV_USBDEV, DEV_COUNT };

static const char *const dev_path[DEV_COUNT] = {
    "/dev/lms_pwm", "/dev/lms_motor", "/dev/lms_analog", "/dev/lms_uart", "/dev/lms_dcm",
    "/dev/lms_iic", "/dev/lms_ui",    "/dev/lms_power",  "/dev/lms_sound", "/dev/lms_usbdev",
};

#define MAX_FDS 1024
static signed char fd_dev[MAX_FDS]; /* device + 1 per open file descriptor, 0 = not ours */

void *real_fn(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "cubot-brick: libc has no %s\n", name);
        _exit(2);
    }
    return f;
}

#define REAL(ret, name, ...)                                                               \
    static ret (*real)(__VA_ARGS__);                                                       \
    if (!real)                                                                             \
    real = (ret(*)(__VA_ARGS__))real_fn(name)

static int dev_of_fd(int fd) { return fd >= 0 && fd < MAX_FDS ? fd_dev[fd] - 1 : -1; }

static int dev_of_path(const char *path)
{
    for (int d = 0; d < DEV_COUNT; d++)
        if (strcmp(path, dev_path[d]) == 0)
            return d;
    return -1;
}

/* The root of the VM's tree (the working directory it was started in); every file it
 * touches must be inside, after ".." and "." are taken into account. */
static char root_dir[4096];

/* `path` as an absolute path without ".", ".." or doubled slashes; 0 if it does not fit. */
static int normalise(const char *path, char *out, size_t size)
{
    char joined[8192];
    if (path[0] == '/') {
        snprintf(joined, sizeof joined, "%s", path);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            return 0;
        snprintf(joined, sizeof joined, "%s/%s", cwd, path);
    }
    size_t len = 0;
    out[0] = 0;
    for (char *part = strtok(joined, "/"); part; part = strtok(NULL, "/")) {
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            while (len > 0 && out[len - 1] != '/')
                len--;
            if (len > 0)
                len--; /* the slash */
            out[len] = 0;
            continue;
        }
        size_t n = strlen(part);
        if (len + 1 + n + 1 > size)
            return 0;
        out[len++] = '/';
        memcpy(out + len, part, n + 1);
        len += n;
    }
    if (len == 0)
        snprintf(out, size, "/");
    return 1;
}

/* Paths the VM may use: its own tree, and two harmless host devices. Everything else (the
 * /sys files it probes for daisy chains, /dev/fb0, /dev/i2c-1, /mnt/ramdisk, or a file name
 * in a direct or system command that climbs out with "..") reads as absent. */
static int forbidden(const char *path)
{
    static int said;
    char full[4096];
    if (!path || !root_dir[0] || strcmp(path, "/dev/null") == 0 || strcmp(path, "/dev/urandom") == 0)
        return 0; /* (before the shim has started, nothing is the VM's yet) */
    if (normalise(path, full, sizeof full)) {
        size_t n = strlen(root_dir);
        if (strncmp(full, root_dir, n) == 0 && (full[n] == '/' || full[n] == 0))
            return 0;
    }
    link_log_once(&said, "the VM asked for %s: absent here, as every path outside its tree "
                         "but the brick's devices (reported once)", path);
    return 1;
}

/* ---- open / close ---- */

static int open_device(int d)
{
    int fd = memfd_create(dev_path[d] + 5, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fd >= MAX_FDS) {
        close(fd);
        errno = EMFILE;
        return -1;
    }
    fd_dev[fd] = (signed char)(d + 1);
    return fd;
}

static int open_path(const char *path, int flags, mode_t mode, int large)
{
    int d = path ? dev_of_path(path) : -1;
    if (d >= 0)
        return open_device(d);
    if (forbidden(path)) {
        errno = ENOENT;
        return -1;
    }
    if (large) {
        REAL(int, "open64", const char *, int, ...);
        return real(path, flags, mode);
    }
    REAL(int, "open", const char *, int, ...);
    return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return open_path(path, flags, mode, 0);
}

int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return open_path(path, flags, mode, 1);
}

FILE *fopen(const char *path, const char *how)
{
    REAL(FILE *, "fopen", const char *, const char *);
    if (forbidden(path)) {
        errno = ENOENT;
        return NULL;
    }
    return real(path, how);
}

FILE *fopen64(const char *path, const char *how)
{
    REAL(FILE *, "fopen64", const char *, const char *);
    if (forbidden(path)) {
        errno = ENOENT;
        return NULL;
    }
    return real(path, how);
}

DIR *opendir(const char *path)
{
    REAL(DIR *, "opendir", const char *);
    if (forbidden(path)) {
        errno = ENOENT;
        return NULL;
    }
    return real(path);
}

int scandir(const char *path, struct dirent ***list, int (*filter)(const struct dirent *),
            int (*compare)(const struct dirent **, const struct dirent **))
{
    REAL(int, "scandir", const char *, struct dirent ***, int (*)(const struct dirent *),
         int (*)(const struct dirent **, const struct dirent **));
    if (forbidden(path)) {
        errno = ENOENT;
        return -1;
    }
    return real(path, list, filter, compare);
}

/* Calls that change the file system: inside the VM's tree only. */
#define REFUSE_OUTSIDE(path)                                                                \
    do {                                                                                    \
        if (forbidden(path)) {                                                              \
            errno = ENOENT;                                                                 \
            return -1;                                                                      \
        }                                                                                   \
    } while (0)

int mkdir(const char *path, mode_t mode)
{
    REAL(int, "mkdir", const char *, mode_t);
    REFUSE_OUTSIDE(path);
    return real(path, mode);
}

int chmod(const char *path, mode_t mode)
{
    REAL(int, "chmod", const char *, mode_t);
    REFUSE_OUTSIDE(path);
    return real(path, mode);
}

int rmdir(const char *path)
{
    REAL(int, "rmdir", const char *);
    REFUSE_OUTSIDE(path);
    return real(path);
}

int unlink(const char *path)
{
    REAL(int, "unlink", const char *);
    REFUSE_OUTSIDE(path);
    return real(path);
}

int remove(const char *path)
{
    REAL(int, "remove", const char *);
    REFUSE_OUTSIDE(path);
    return real(path);
}

int rename(const char *from, const char *to)
{
    REAL(int, "rename", const char *, const char *);
    REFUSE_OUTSIDE(from);
    REFUSE_OUTSIDE(to);
    return real(from, to);
}

/* The mount table (SD card and USB stick checks): a brick with nothing mounted. An empty
 * file, not NULL: c_memory reads it without checking (cMemoryGetMediaName). */
FILE *setmntent(const char *path, const char *how)
{
    REAL(FILE *, "fopen", const char *, const char *);
    (void)path, (void)how;
    return real("/dev/null", "r");
}

int close(int fd)
{
    REAL(int, "close", int);
    if (dev_of_fd(fd) >= 0)
        fd_dev[fd] = 0;
    return real(fd);
}

/* ---- read / write / ioctl ---- */

/* A kernel driver's file operation returns -errno; the system call gives -1 and errno. */
static ssize_t driver_result(ssize_t r)
{
    if (r >= 0)
        return r;
    errno = (int)-r;
    return -1;
}

ssize_t read(int fd, void *buf, size_t n)
{
    REAL(ssize_t, "read", int, void *, size_t);
    switch (dev_of_fd(fd)) {
    case -1:
        return real(fd, buf, n);
    case DEV_PWM:
        return driver_result(pwmhost_pwm_read(buf, n));
    case DEV_UI:
        return ports_ui_read(buf, n);
    case DEV_POWER:
        /* d_power: '1' with a rechargeable pack, '0' with six AA cells */
        if (n >= 2) {
            ((char *)buf)[0] = '0', ((char *)buf)[1] = '\r';
            return 2;
        }
        return 0;
    case DEV_USBDEV:
        return usb_read(buf, n);
    default:
        return 0;
    }
}

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(ssize_t, "write", int, const void *, size_t);
    switch (dev_of_fd(fd)) {
    case -1:
        return real(fd, buf, n);
    case DEV_PWM:
        return driver_result(pwmhost_pwm_write(buf, n));
    case DEV_MOTOR:
        return driver_result(pwmhost_motor_write(buf, n));
    case DEV_SOUND:
        return sound_write(buf, n);
    case DEV_USBDEV:
        return usb_write(buf, n);
    default:
        /* DCM pin setups, LED patterns, power and test pins, bytes to a UART sensor
         * (INPUT_WRITE): taken, with nothing behind them to act on. */
        return (ssize_t)n;
    }
}

int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    switch (dev_of_fd(fd)) {
    case -1: {
        REAL(int, "ioctl", int, unsigned long, ...);
        return real(fd, request, arg);
    }
    case DEV_UART:
        return ports_uart_ioctl(request, arg);
    default:
        return 0; /* IIC setups, the power switch: nothing connected to act on */
    }
}

/* ---- mmap: every map of a device is its one shared block ---- */

static void *device_mem(int d, size_t *len)
{
    switch (d) {
    case DEV_MOTOR:
        return pwmhost_motor_mem(len);
    case DEV_ANALOG:
        return ports_mem(MEM_ANALOG, len);
    case DEV_UART:
        return ports_mem(MEM_UART, len);
    case DEV_IIC:
        return ports_mem(MEM_IIC, len);
    case DEV_UI:
        return ports_mem(MEM_UI, len);
    case DEV_SOUND:
        return sound_mem(len);
    case DEV_USBDEV:
        return usb_speed_mem(len);
    default:
        return NULL;
    }
}

static void *map_device(int fd, void *addr, size_t len, int prot, int flags, off_t off, int large)
{
    int d = dev_of_fd(fd);
    if (d < 0) {
        if (large) {
            REAL(void *, "mmap64", void *, size_t, int, int, int, off64_t);
            return real(addr, len, prot, flags, fd, off);
        }
        REAL(void *, "mmap", void *, size_t, int, int, int, off_t);
        return real(addr, len, prot, flags, fd, off);
    }
    size_t have = 0;
    void *mem = device_mem(d, &have);
    if (!mem || off != 0) {
        errno = ENODEV;
        return MAP_FAILED;
    }
    return mem;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return map_device(fd, addr, len, prot, flags, off, 0);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return map_device(fd, addr, len, prot, flags, (off_t)off, 1);
}

int munmap(void *addr, size_t len)
{
    REAL(int, "munmap", void *, size_t);
    for (int d = 0; d < DEV_COUNT; d++) {
        size_t have = 0;
        void *mem = device_mem(d, &have);
        if (mem && (uint8_t *)addr >= (uint8_t *)mem && (uint8_t *)addr < (uint8_t *)mem + have)
            return 0; /* a device's memory outlives every map of it */
    }
    return real(addr, len);
}

/* ---- select / poll: only USB frames ever make a device readable ---- */

static int dev_readable(int d) { return d == DEV_USBDEV ? usb_readable() : 1; }

static uint64_t timeval_us(const struct timeval *tv)
{
    return tv ? (uint64_t)tv->tv_sec * 1000000 + (uint64_t)tv->tv_usec : 0;
}

int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *timeout)
{
    REAL(int, "select", int, fd_set *, fd_set *, fd_set *, struct timeval *);
    fd_set mine_rd, mine_wr;
    int ours = 0, ready = 0, others = 0;
    FD_ZERO(&mine_rd);
    FD_ZERO(&mine_wr);
    for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
        int d = dev_of_fd(fd);
        int r = rd && FD_ISSET(fd, rd), w = wr && FD_ISSET(fd, wr);
        if (d < 0) {
            others += r || w || (ex && FD_ISSET(fd, ex));
            continue;
        }
        ours = 1;
        if (r && dev_readable(d))
            FD_SET(fd, &mine_rd), ready++;
        if (w)
            FD_SET(fd, &mine_wr), ready++;
        if (rd)
            FD_CLR(fd, rd);
        if (wr)
            FD_CLR(fd, wr);
        if (ex)
            FD_CLR(fd, ex);
    }
    if (!ours) {
        /* Host descriptors (none on a normal run): look, never wait on the real clock. */
        struct timeval zero = {0, 0};
        int n = real(nfds, rd, wr, ex, &zero);
        if (n == 0 && timeout)
            vclock_sleep(timeval_us(timeout));
        return n;
    }
    if (others) {
        struct timeval zero = {0, 0};
        int n = real(nfds, rd, wr, ex, &zero);
        if (n > 0)
            ready += n;
    }
    for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
        if (FD_ISSET(fd, &mine_rd))
            FD_SET(fd, rd);
        if (FD_ISSET(fd, &mine_wr))
            FD_SET(fd, wr);
    }
    if (ready == 0 && timeout && timeval_us(timeout) > 0)
        vclock_sleep(timeval_us(timeout));
    return ready;
}

int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    REAL(int, "poll", struct pollfd *, nfds_t, int);
    int ready = 0;
    for (nfds_t i = 0; i < n; i++) {
        int d = dev_of_fd(fds[i].fd);
        if (d < 0) {
            struct pollfd one = fds[i];
            if (real(&one, 1, 0) > 0)
                ready++;
            fds[i].revents = one.revents;
            continue;
        }
        fds[i].revents = (short)(fds[i].events & (POLLOUT | (dev_readable(d) ? POLLIN : 0)));
        ready += fds[i].revents != 0;
    }
    if (ready == 0 && timeout_ms > 0)
        vclock_sleep((uint64_t)timeout_ms * 1000);
    return ready;
}

/* ---- what must not reach the host ---- */

int system(const char *command)
{
    link_log("refused system(\"%s\")", command ? command : "");
    return -1;
}

FILE *popen(const char *command, const char *how)
{
    (void)how;
    link_log("refused popen(\"%s\")", command ? command : "");
    errno = EPERM;
    return NULL;
}

int sethostname(const char *name, size_t len)
{
    link_log("brick name set to \"%.*s\" (host name left alone)", (int)len, name);
    return 0;
}

void openlog(const char *ident, int option, int facility) { (void)ident, (void)option, (void)facility; }
void closelog(void) {}

void vsyslog(int priority, const char *fmt, va_list ap)
{
    char text[256];
    (void)priority;
    vsnprintf(text, sizeof text, fmt, ap);
    link_log("syslog: %s", text);
}

void syslog(int priority, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsyslog(priority, fmt, ap);
    va_end(ap);
}

/* What a brick's kernel says (GET_OS_VERS), not the host's. */
int uname(struct utsname *u)
{
    memset(u, 0, sizeof *u);
    strcpy(u->sysname, "Linux");
    snprintf(u->nodename, sizeof u->nodename, "%s", brick_cfg.name[0] ? brick_cfg.name : "EV3");
    strcpy(u->release, "2.6.33-rc4");
    strcpy(u->version, "#1 PREEMPT");
    strcpy(u->machine, "armv5tejl");
    return 0;
}

/* c_ui's debug terminal (d_terminal.c) gives up unless stdin is a terminal; stdin is
 * /dev/null, which reads as "no key pressed", so pretending is harmless. */
int tcgetattr(int fd, struct termios *t)
{
    REAL(int, "tcgetattr", int, struct termios *);
    if (fd != STDIN_FILENO)
        return real(fd, t);
    memset(t, 0, sizeof *t);
    return 0;
}

int tcsetattr(int fd, int when, const struct termios *t)
{
    REAL(int, "tcsetattr", int, int, const struct termios *);
    if (fd != STDIN_FILENO)
        return real(fd, when, t);
    return 0;
}

/* ---- start ---- */

static void write_brick_name(void)
{
    FILE *f = fopen("settings/BrickName", "w");
    if (!f) {
        link_log("cannot write settings/BrickName: the brick keeps its default name");
        return;
    }
    fputs(brick_cfg.name[0] ? brick_cfg.name : "EV3", f);
    fclose(f);
}

/* d_pwm's printk lines and the glue's warnings. */
static void driver_log(const char *line) { link_log("d_pwm: %s", line); }

__attribute__((constructor)) static void shim_start(void)
{
    link_start();
    /* Children (none expected: system and popen refuse) must not load the shim again. */
    unsetenv("LD_PRELOAD");
    unsetenv("CUBOT_BRICK_FD");
    if (!getcwd(root_dir, sizeof root_dir) || strcmp(root_dir, "/") == 0) {
        link_log("cannot tell the VM's working directory (or it is /)");
        _exit(2);
    }
    if (chdir("sys") != 0) {
        link_log("no sys/ in the working directory: run the VM in a copy of target/lms2012/root");
        _exit(2);
    }
    write_brick_name();
    srand((unsigned)(brick_cfg.seed ^ brick_cfg.seed >> 32)); /* the RANDOM opcode's rand() */
    ports_start();
    pwmhost_set_log(driver_log);
    if (pwmhost_init() != 0) {
        link_log("the motor driver (d_pwm) did not start");
        _exit(2);
    }
    usb_start();
}
