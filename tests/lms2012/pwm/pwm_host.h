/*
 * pwm_host.h: LEGO's EV3 motor driver (lms2012 d_pwm.c, compiled unmodified behind
 * tests/lms2012/compat) driven from user space, one call per thing the brick's hardware
 * or the VM would do. Used by the firmware brick's device shim and by selftest.c.
 *
 * Not thread-safe: call everything from one thread (the shim's virtual clock).
 *
 * Time: the driver timestamps tacho edges with a free-running counter it reads as
 * TIMER64P3[TIM34] >> 8. Here that counter runs at PWMHOST_TIMER_HZ after the shift and
 * wraps at 24 bits like the hardware's. With d_pwm's 12800 (large) and 8100 (medium)
 * "counts per pulse", speed 100 is 1050 deg/s for a large motor and ~1659 deg/s for a
 * medium one.
 *
 * Platform: initialised as a retail EV3 (hardware "V0.60", HwId "06"), which the driver
 * clamps to its newest platform, EP2: tacho DIR inputs inverted (HwInvBits), PWM outputs
 * A<->B and C<->D swapped. pwmhost_output reports per output port all the same.
 */
#ifndef CUBOT_LMS2012_PWM_HOST_H
#define CUBOT_LMS2012_PWM_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The free-running timer's rate after d_pwm's >> 8, in Hz. */
#define PWMHOST_TIMER_HZ 134400u

/* The module parameter HwId a retail brick is started with (its sys/settings/HwId). */
#define PWMHOST_HWID "06"

/* Output drive as the DIR0/DIR1 pins set it (pwmhost_output). */
enum pwmhost_drive {
    PWMHOST_COAST = 0,   /* DIR0 low,   DIR1 low   */
    PWMHOST_FORWARD = 1, /* DIR0 high,  DIR1 float */
    PWMHOST_REVERSE = 2, /* DIR0 float, DIR1 high  */
    PWMHOST_BRAKE = 3,   /* DIR0 high,  DIR1 high  */
};

/* Load the module as insmod does at boot (ModuleInit: GPIO, PWM peripherals, the two
 * misc devices, the 2 ms timer, the four tacho interrupts). 0 on success; -1 with a log
 * line naming what is missing. A second call does nothing and returns 0. */
int pwmhost_init(void);

/* /dev/lms_pwm write() and read(), /dev/lms_motor write(): straight into the driver's
 * file operations. The return value is the driver's (its write returns 0); a negative
 * value is -errno (EINVAL: more bytes than the driver's 20-byte buffer, or not
 * initialised). The read gives the driver's text "<ReadyStatus> <TestStatus> ". */
ssize_t pwmhost_pwm_write(const char *buf, size_t n);
ssize_t pwmhost_pwm_read(char *buf, size_t n);
ssize_t pwmhost_motor_write(const char *buf, size_t n);

/* MOTORDATA[4] (TachoCounts, Speed, TachoSensor per port): the memory the driver's mmap
 * of /dev/lms_motor maps. *len gets its size in bytes (48). NULL before pwmhost_init. */
void *pwmhost_motor_mem(size_t *len);

/* Set the free-running timer to virtual time t_us (microseconds since boot). */
void pwmhost_set_timer_us(uint64_t t_us);

/* One tacho edge on output port 0..3 (A..D) at the timer's current time: the port's INT
 * input toggles, its DIR input is set for the direction (dir > 0 forward, count up;
 * dir < 0 backward), and the driver's interrupt handler for that port runs. */
void pwmhost_edge(int port, int dir);

/* One call of the driver's 2 ms hrtimer callback (set the timer first). */
void pwmhost_tick(void);

/* What output port 0..3 drives now: the PWM compare value the driver last wrote for that
 * port (0..10000) and the drive from its DIR0/DIR1 pins (enum pwmhost_drive). */
void pwmhost_output(int port, uint16_t *duty, uint8_t *drive);

/* Where the driver's printk lines and the glue's warnings go (default: stderr). */
void pwmhost_set_log(void (*fn)(const char *line));

#ifdef __cplusplus
}
#endif

#endif /* CUBOT_LMS2012_PWM_HOST_H */
