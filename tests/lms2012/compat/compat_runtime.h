/*
 * compat_runtime.h: what the host glue may ask of compat.c, the user-space runtime behind
 * compat.h (registered misc devices, recorded interrupt handlers, the started hrtimer, the
 * register blocks handed out by ioremap, the address a driver's mmap asked to map, the
 * log hook). Include after compat.h.
 */
#ifndef CUBOT_LMS2012_COMPAT_RUNTIME_H
#define CUBOT_LMS2012_COMPAT_RUNTIME_H

/* Platform set-up done by the kernel before any module loads: maps the system
 * configuration block (da8xx_syscfg0_base). Idempotent. */
void compat_boot(void);

/* Log hook for printk (and for the glue's own warnings). NULL restores the default,
 * which writes to stderr. Lines are passed without their trailing newline. */
void compat_set_log(void (*fn)(const char *line));
void compat_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The misc device registered under `name` ("lms_pwm"), or NULL. */
const struct miscdevice *compat_misc_find(const char *name);

/* The handler and cookie request_irq recorded for `irq`; 0 when there is one. */
int compat_irq_lookup(unsigned int irq, irq_handler_t *handler, void **dev);

/* The timer hrtimer_start last started (NULL after hrtimer_cancel). */
struct hrtimer *compat_active_timer(void);

/* The block ioremap handed out for physical base `phys` (NULL if never mapped) and its size. */
void *compat_region(unsigned long phys, unsigned long *size);

/* A driver's mmap handler maps memory with remap_pfn_range; compat stores the address
 * of that memory in vma->vm_private_data: what user space sees at vma->vm_start. */

#endif /* CUBOT_LMS2012_COMPAT_RUNTIME_H */
