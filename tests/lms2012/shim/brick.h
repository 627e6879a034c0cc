/*
 * The firmware brick's device shim: what its parts share.
 *
 * libcubot_brick.so is LD_PRELOADed into LEGO's EV3 VM (lms2012, built for 32-bit x86).
 * It stands in for everything below the VM on a real brick: the kernel modules behind
 * /dev/lms_* (motors through LEGO's own d_pwm, compiled in user space by tests/lms2012/pwm/),
 * the clock, and the USB cable to the host. The physical world (motors, sensors) lives in
 * cubot, which drives the brick over one SOCK_SEQPACKET socket (the "world link"): see
 * link.c for the messages, clock.c for how virtual time moves and when the world is asked.
 *
 * Parts: link.c (messages), clock.c (virtual clock, the 2 ms tick), devices.c (the libc
 * calls the VM makes: open/read/write/ioctl/mmap/select on device files, and what a
 * headless sandboxed process must refuse), ports.c (input and output port memory: device
 * types, UART sensors, battery), usb.c (direct-command frames and replies), sound.c (the
 * sound driver's busy flag).
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#ifndef CUBOT_BRICK_H
#define CUBOT_BRICK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BRICK_PORTS 4

/* The world link's CONFIG, the first message cubot sends. */
struct brick_config {
    uint8_t out_type[BRICK_PORTS]; /* output ports A..D: 0 none, 7 large motor, 8 medium motor */
    uint8_t in_type[BRICK_PORTS];  /* input ports 1..4: 0 none, 29 colour sensor, 33 IR sensor */
    uint32_t battery_mv;
    uint32_t tick_us;  /* d_pwm's timer period (2000) */
    uint32_t round_us; /* virtual time one VM scheduler round costs */
    uint64_t seed;
    char name[33]; /* brick name, NUL terminated */
};
extern struct brick_config brick_cfg;

/* What a WORLD message says about one tick: tacho edges per output port, and what each
 * input port's sensor is sending now. */
#define WORLD_MAX_EDGES 255
struct world_edge {
    uint16_t at_us; /* from the tick's start */
    int8_t dir;     /* +1 counts up, -1 counts down */
};
struct world_sensor {
    uint8_t mode;
    uint8_t flags; /* WORLD_DATA_VALID, WORLD_SWITCHING */
    int16_t value[4];
};
#define WORLD_DATA_VALID 0x01
#define WORLD_SWITCHING 0x02
struct world {
    uint8_t edges[BRICK_PORTS];
    struct world_edge edge[BRICK_PORTS][WORLD_MAX_EDGES];
    struct world_sensor sensor[BRICK_PORTS];
};

/* ---- link.c: the world link ---- */
void link_start(void);                 /* connect (CUBOT_BRICK_FD) and read CONFIG */
void link_send(char kind, const void *payload, size_t n);
void link_send_at(char kind, uint64_t t_us, const void *data, size_t n); /* [kind][u64 t][data] */
void link_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void link_log_once(int *said, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sends a TICK and returns the WORLD that answers it (FRAMEs and RUNs arriving meanwhile are
 * taken as usual). */
void link_tick(const void *tick, size_t n, struct world *answer);
/* Blocks while the clock stands at the end of the last RUN grant: sends IDLE once, then
 * takes messages until a RUN moves the limit past `now`. */
void link_wait_for_run(void);
/* The end of the current RUN grant; UINT64_MAX until BOOTED (boot runs free). */
extern uint64_t link_run_until;
void link_booted(const char *version); /* sends BOOTED; from now on time needs RUN grants */

/* ---- clock.c: virtual time ---- */
extern uint64_t vclock_now_us;
void vclock_sleep(uint64_t us); /* the only way time moves; runs the ticks it crosses */

/* ---- usb.c: direct-command frames in, replies out ---- */
void usb_start(void);
void usb_queue_frame(const uint8_t *frame, size_t n);
int usb_readable(void);
ssize_t usb_read(void *buf, size_t n);
ssize_t usb_write(const void *buf, size_t n);
void *usb_speed_mem(size_t *len);

/* ---- ports.c: analog, UART, IIC, UI and DCM memory ---- */
enum port_mem { MEM_ANALOG, MEM_UART, MEM_IIC, MEM_UI };
void ports_start(void);
void *ports_mem(enum port_mem which, size_t *len);
int ports_uart_ioctl(unsigned long request, void *arg);
ssize_t ports_ui_read(char *buf, size_t n);
/* Tick step 3: what the sensors sent (the last WORLD) goes into the UART memory. */
void ports_sensor_data(const struct world *w);
/* The mode the VM last asked of each input port's sensor since the previous call (0xFF none). */
void ports_take_mode_requests(uint8_t req[BRICK_PORTS]);

/* ---- sound.c: the sound driver's busy flag ---- */
void *sound_mem(size_t *len);
ssize_t sound_write(const void *buf, size_t n);
void sound_update(uint64_t now_us);

/* ---- devices.c ---- */
/* The real libc function behind one we interpose (dlsym RTLD_NEXT), or exit if missing. */
void *real_fn(const char *name);

#endif
