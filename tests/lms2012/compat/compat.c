/*
 * compat.c: the user-space runtime behind compat.h (see there for what each kernel call
 * becomes). Single-threaded by design: the firmware brick runs the driver from one thread
 * in lockstep with its virtual clock, so there is no locking here.
 */
#include "compat.h"
#include "compat_runtime.h"

#include <stdarg.h>
#include <stdlib.h>

void *da8xx_syscfg0_base;

/* ---- log ---- */

static void (*log_fn)(const char *line);

void compat_set_log(void (*fn)(const char *line)) { log_fn = fn; }

static void log_text(char *text)
{
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        text[--n] = '\0';
    if (log_fn)
        log_fn(text);
    else
        fprintf(stderr, "lms2012 compat: %s\n", text);
}

void compat_log(const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    log_text(text);
}

int compat_printk(const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    log_text(text);
    return n;
}

/* ---- register blocks: one per physical base address ---- */

#define MAX_REGIONS 32

static struct {
    unsigned long phys;
    unsigned long size;
    void *block;
} regions[MAX_REGIONS];
static int n_regions;

void *compat_ioremap(unsigned long phys, unsigned long size)
{
    for (int i = 0; i < n_regions; i++) {
        if (regions[i].phys == phys) {
            if (size > regions[i].size) {
                compat_log("ioremap 0x%08lx: %lu bytes asked, block has %lu", phys, size,
                           regions[i].size);
                return NULL;
            }
            return regions[i].block;
        }
    }
    if (n_regions == MAX_REGIONS) {
        compat_log("ioremap 0x%08lx: too many register blocks", phys);
        return NULL;
    }
    /* at least one page, whole pages: a later, larger mapping of the same base fits */
    unsigned long bytes = (size + PAGE_SIZE - 1) & PAGE_MASK;
    if (bytes < PAGE_SIZE)
        bytes = PAGE_SIZE;
    void *block = calloc(1, bytes);
    if (!block)
        return NULL;
    regions[n_regions].phys = phys;
    regions[n_regions].size = bytes;
    regions[n_regions].block = block;
    n_regions++;
    return block;
}

void *compat_region(unsigned long phys, unsigned long *size)
{
    for (int i = 0; i < n_regions; i++) {
        if (regions[i].phys == phys) {
            if (size)
                *size = regions[i].size;
            return regions[i].block;
        }
    }
    return NULL;
}

void compat_boot(void)
{
    if (!da8xx_syscfg0_base)
        da8xx_syscfg0_base = compat_ioremap(DA8XX_SYSCFG0_BASE, PAGE_SIZE);
}

/* ---- interrupts ---- */

#define MAX_IRQS 512

static struct {
    irq_handler_t handler;
    void *dev;
    unsigned int type;
} irqs[MAX_IRQS];

int compat_request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
                       const char *name, void *dev)
{
    (void)flags;
    (void)name;
    if (irq >= MAX_IRQS)
        return -EINVAL;
    if (irqs[irq].handler)
        return -EBUSY;
    irqs[irq].handler = handler;
    irqs[irq].dev = dev;
    return 0;
}

void compat_free_irq(unsigned int irq, void *dev)
{
    (void)dev;
    if (irq < MAX_IRQS)
        irqs[irq].handler = NULL;
}

int compat_set_irq_type(unsigned int irq, unsigned int type)
{
    if (irq >= MAX_IRQS)
        return -EINVAL;
    irqs[irq].type = type;
    return 0;
}

int compat_irq_lookup(unsigned int irq, irq_handler_t *handler, void **dev)
{
    if (irq >= MAX_IRQS || !irqs[irq].handler)
        return -1;
    *handler = irqs[irq].handler;
    *dev = irqs[irq].dev;
    return 0;
}

/* ---- misc devices ---- */

#define MAX_MISC 8

static struct miscdevice *miscs[MAX_MISC];

int compat_misc_register(struct miscdevice *dev)
{
    for (int i = 0; i < MAX_MISC; i++) {
        if (!miscs[i]) {
            miscs[i] = dev;
            return 0;
        }
    }
    return -EBUSY;
}

int compat_misc_deregister(struct miscdevice *dev)
{
    for (int i = 0; i < MAX_MISC; i++) {
        if (miscs[i] == dev) {
            miscs[i] = NULL;
            return 0;
        }
    }
    return -EINVAL;
}

const struct miscdevice *compat_misc_find(const char *name)
{
    for (int i = 0; i < MAX_MISC; i++) {
        if (miscs[i] && miscs[i]->name && strcmp(miscs[i]->name, name) == 0)
            return miscs[i];
    }
    return NULL;
}

/* ---- memory ---- */

void *compat_kmalloc(size_t size, gfp_t flags)
{
    (void)flags;
    return malloc(size);
}

void compat_kfree(const void *p) { free((void *)p); }

int compat_remap_pfn_range(struct vm_area_struct *vma, unsigned long addr, unsigned long pfn,
                           unsigned long size, pgprot_t prot)
{
    (void)addr;
    (void)size;
    (void)prot;
    vma->vm_private_data = (void *)(pfn << PAGE_SHIFT); /* virt_to_phys is the identity */
    return 0;
}

/* ---- hrtimer ---- */

static struct hrtimer *active_timer;

int compat_hrtimer_start(struct hrtimer *timer, ktime_t period, enum hrtimer_mode mode)
{
    (void)mode;
    timer->period = period;
    active_timer = timer;
    return 0;
}

int compat_hrtimer_cancel(struct hrtimer *timer)
{
    if (active_timer == timer) {
        active_timer = NULL;
        return 1;
    }
    return 0;
}

struct hrtimer *compat_active_timer(void) { return active_timer; }
