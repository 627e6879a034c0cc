/*
 * TEMPORARY (placeholder until branch fw-pwm lands): the d_pwm host glue API as the
 * firmware-brick spec fixes it. The real header is tests/lms2012/pwm/pwm_host.h; the build
 * uses that one as soon as it exists, and this folder is then deleted.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#ifndef CUBOT_PWM_HOST_H
#define CUBOT_PWM_HOST_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int pwmhost_init(void);
ssize_t pwmhost_pwm_write(const char *buf, size_t n);
ssize_t pwmhost_pwm_read(char *buf, size_t n);
ssize_t pwmhost_motor_write(const char *buf, size_t n);
void *pwmhost_motor_mem(size_t *len);
void pwmhost_set_timer_us(uint64_t t_us);
void pwmhost_edge(int port, int dir);
void pwmhost_tick(void);
void pwmhost_output(int port, uint16_t *duty, uint8_t *drive);
#endif
