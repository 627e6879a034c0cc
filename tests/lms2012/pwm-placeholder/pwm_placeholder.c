/*
 * TEMPORARY placeholder for LEGO's motor driver (d_pwm.c compiled in user space, branch
 * fw-pwm): implements pwm_host.h with no motion at all, so the shim and the test client can
 * be developed before the real glue exists. Every motor command is accepted and ignored,
 * every motor reads as idle (not busy, count 0), every output is coasting at duty 0.
 * Delete this folder once tests/lms2012/pwm/ provides the real glue.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#include "pwm_host.h"
#include <stdio.h>
#include <string.h>

/* Four MOTORDATA records (TachoCounts, Speed, TachoSensor: 12 bytes each with padding);
 * all zero means "no counts, no speed". */
static int32_t motor_mem[4 * 3];

int pwmhost_init(void) { return 0; }
ssize_t pwmhost_pwm_write(const char *buf, size_t n) { (void)buf; return (ssize_t)n; }

ssize_t pwmhost_pwm_read(char *buf, size_t n)
{
    /* d_pwm answers "ReadyStatus TestStatus " as text; 0 0 = no motor busy. */
    int len = snprintf(buf, n, "%u %u ", 0u, 0u);
    return len < 0 ? 0 : (ssize_t)len;
}

ssize_t pwmhost_motor_write(const char *buf, size_t n) { (void)buf; return (ssize_t)n; }

void *pwmhost_motor_mem(size_t *len)
{
    *len = sizeof motor_mem;
    return motor_mem;
}

void pwmhost_set_timer_us(uint64_t t_us) { (void)t_us; }
void pwmhost_edge(int port, int dir) { (void)port, (void)dir; }
void pwmhost_tick(void) {}

void pwmhost_output(int port, uint16_t *duty, uint8_t *drive)
{
    (void)port;
    *duty = 0;
    *drive = 0;
}
