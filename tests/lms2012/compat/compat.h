/*
 * compat.h: the slice of the Linux 2.6 kernel API that LEGO's EV3 motor driver
 * (lms2012 d_pwm/Linuxmod_AM1808/d_pwm.c) uses, re-created for a 32-bit user-space
 * process. Force-included (`gcc -include compat.h`) before the driver; the fake
 * <linux/...>, <asm/...> and <mach/...> headers next to it only include this file.
 *
 * Written for cubot's firmware brick. Nothing here is taken from the kernel: the
 * names and signatures are the kernel's public API, the behaviour is ours:
 *  - register blocks: request_mem_region always succeeds; ioremap(phys, size) hands out
 *    one zeroed block per physical base address (the same block each time that base is
 *    mapped again), owned by compat.c; ioread/iowrite are plain volatile accesses;
 *  - interrupts: request_irq records the handler per irq number, gpio_to_irq is a fixed
 *    offset, nothing fires on its own: the host glue calls the recorded handler;
 *  - the hrtimer: hrtimer_start records the timer, nothing runs on its own: the glue
 *    calls timer->function once per tick; hrtimer_forward_now does nothing;
 *  - misc devices: misc_register records the device (name + file_operations) so the
 *    glue can call its read/write/mmap;
 *  - memory: kmalloc is malloc, virt_to_phys is the identity, remap_pfn_range records
 *    the address it was asked to map (that is what mmap() of the device returns);
 *  - printk formats into a log hook (compat_set_log).
 *
 * Runtime half: compat.c; what the glue may look up: compat_runtime.h.
 */
#ifndef CUBOT_LMS2012_COMPAT_H
#define CUBOT_LMS2012_COMPAT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#ifndef __i386__
#error "compat.h is for a 32-bit build (gcc -m32): the lms2012 code keeps pointers in 32-bit values"
#endif

/* ---- <asm/types.h>, <linux/types.h> ---- */
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef unsigned int gfp_t;

#define __iomem
#define __user
#define __init
#define __exit

/* ---- <linux/kernel.h>: printk into the log hook ---- */
#define KERN_ERR ""
#define KERN_WARNING ""
#define KERN_INFO ""
#define KERN_DEBUG ""
int compat_printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define printk(...) compat_printk(__VA_ARGS__)

/* ---- <linux/module.h>, <linux/init.h>, <linux/moduleparam.h> ----
 * module_init(fn) defines a public entry that runs the module's static init function,
 * as insmod would; module_exit likewise. The other macros only need to be valid at file
 * scope (each use ends with ';', which closes the extern declaration they expand to). */
struct module;
#define THIS_MODULE ((struct module *)0)
#ifndef COMPAT_MODULE_INIT
#define COMPAT_MODULE_INIT compat_module_init
#endif
#ifndef COMPAT_MODULE_EXIT
#define COMPAT_MODULE_EXIT compat_module_exit
#endif
#define module_init(fn)                                                                  \
    int COMPAT_MODULE_INIT(void) { return fn(); }                                        \
    extern int COMPAT_MODULE_INIT(void)
#define module_exit(fn)                                                                  \
    void COMPAT_MODULE_EXIT(void) { fn(); }                                              \
    extern void COMPAT_MODULE_EXIT(void)
#define COMPAT_FILE_SCOPE_NOTHING extern int compat_file_scope_nothing
#define MODULE_LICENSE(x) COMPAT_FILE_SCOPE_NOTHING
#define MODULE_AUTHOR(x) COMPAT_FILE_SCOPE_NOTHING
#define MODULE_DESCRIPTION(x) COMPAT_FILE_SCOPE_NOTHING
#define MODULE_SUPPORTED_DEVICE(x) COMPAT_FILE_SCOPE_NOTHING
#define module_param(name, type, perm) COMPAT_FILE_SCOPE_NOTHING

/* ---- <asm/uaccess.h>: one address space, so plain copies ---- */
static inline unsigned long copy_from_user(void *to, const void *from, unsigned long n)
{
    memcpy(to, from, n);
    return 0;
}
static inline unsigned long copy_to_user(void *to, const void *from, unsigned long n)
{
    memcpy(to, from, n);
    return 0;
}

/* ---- <linux/ioport.h>, <asm/io.h>: register blocks owned by compat.c ---- */
void *compat_ioremap(unsigned long phys, unsigned long size);
#define request_mem_region(start, n, name) (0)
#define release_mem_region(start, n) ((void)0)
#define ioremap(phys, size) compat_ioremap((unsigned long)(phys), (unsigned long)(size))
#define ioremap_nocache(phys, size) ioremap(phys, size)
#define iounmap(addr) ((void)(addr))
static inline u32 ioread32(const volatile void *addr) { return *(const volatile u32 *)addr; }
static inline u16 ioread16(const volatile void *addr) { return *(const volatile u16 *)addr; }
static inline u8 ioread8(const volatile void *addr) { return *(const volatile u8 *)addr; }
static inline void iowrite32(u32 v, volatile void *addr) { *(volatile u32 *)addr = v; }
static inline void iowrite16(u16 v, volatile void *addr) { *(volatile u16 *)addr = v; }
static inline void iowrite8(u8 v, volatile void *addr) { *(volatile u8 *)addr = v; }

/* ---- <mach/da8xx.h>: the AM1808 (DA850) system configuration block ---- */
#define DA8XX_SYSCFG0_BASE 0x01C14000UL
#define DA8XX_GPIO_BASE 0x01E26000UL
extern void *da8xx_syscfg0_base; /* set up by compat_boot(), as platform code does */

/* ---- <asm/gpio.h>, <mach/gpio.h>: one DaVinci GPIO register set (two 16-pin banks);
 * 0x28 bytes each, starting 0x10 into the GPIO block ---- */
struct gpio_controller {
    u32 dir;      /* 1 = input (floating), 0 = output */
    u32 out_data; /* output latch */
    u32 set_data; /* write-only on hardware: 1s set latch bits */
    u32 clr_data; /* write-only on hardware: 1s clear latch bits */
    u32 in_data;  /* pin levels as read */
    u32 set_rising;
    u32 clr_rising;
    u32 set_falling;
    u32 clr_falling;
    u32 intstat;
};
#define COMPAT_GPIO_IRQ_BASE 101 /* first GPIO irq after the AM1808's 101 AINTC lines */
#define gpio_to_irq(gpio) (COMPAT_GPIO_IRQ_BASE + (int)(gpio))
#define irq_to_gpio(irq) ((int)(irq)-COMPAT_GPIO_IRQ_BASE)

/* ---- <linux/interrupt.h>, <linux/irq.h> ---- */
typedef int irqreturn_t;
#define IRQ_NONE 0
#define IRQ_HANDLED 1
#define IRQ_TYPE_NONE 0
#define IRQ_TYPE_EDGE_RISING 1
#define IRQ_TYPE_EDGE_FALLING 2
#define IRQ_TYPE_EDGE_BOTH (IRQ_TYPE_EDGE_RISING | IRQ_TYPE_EDGE_FALLING)
typedef irqreturn_t (*irq_handler_t)(int, void *);
int compat_request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
                       const char *name, void *dev);
void compat_free_irq(unsigned int irq, void *dev);
int compat_set_irq_type(unsigned int irq, unsigned int type);
#define request_irq(irq, handler, flags, name, dev) compat_request_irq(irq, handler, flags, name, dev)
#define free_irq(irq, dev) compat_free_irq(irq, dev)
#define set_irq_type(irq, type) compat_set_irq_type(irq, type)

/* ---- <linux/fs.h>, <linux/miscdevice.h> ---- */
struct file;
struct inode;
struct vm_area_struct;
struct file_operations {
    struct module *owner;
    ssize_t (*read)(struct file *, char *, size_t, loff_t *);
    ssize_t (*write)(struct file *, const char *, size_t, loff_t *);
    long (*unlocked_ioctl)(struct file *, unsigned int, unsigned long);
    int (*mmap)(struct file *, struct vm_area_struct *);
    int (*open)(struct inode *, struct file *);
    int (*release)(struct inode *, struct file *);
};
#define MISC_DYNAMIC_MINOR 255
struct miscdevice { /* field order as in the kernel: drivers initialise it positionally */
    int minor;
    const char *name;
    const struct file_operations *fops;
};
int compat_misc_register(struct miscdevice *dev);
int compat_misc_deregister(struct miscdevice *dev);
#define misc_register(dev) compat_misc_register(dev)
#define misc_deregister(dev) compat_misc_deregister(dev)

/* ---- <linux/mm.h>, <linux/slab.h>: pages and mappings ---- */
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))
typedef struct {
    unsigned long pgprot;
} pgprot_t;
#define PAGE_SHARED ((pgprot_t){0})
struct page;
struct vm_area_struct {
    unsigned long vm_start;
    unsigned long vm_end;
    void *vm_private_data;
};
#define GFP_KERNEL 0u
#define GFP_ATOMIC 0u
void *compat_kmalloc(size_t size, gfp_t flags);
void compat_kfree(const void *p);
#define kmalloc(size, flags) compat_kmalloc(size, flags)
#define kfree(p) compat_kfree(p)
#define virt_to_phys(addr) ((unsigned long)(addr))
#define virt_to_page(addr) ((struct page *)(addr))
#define SetPageReserved(page) ((void)(page))
#define ClearPageReserved(page) ((void)(page))
int compat_remap_pfn_range(struct vm_area_struct *vma, unsigned long addr, unsigned long pfn,
                           unsigned long size, pgprot_t prot);
#define remap_pfn_range(vma, addr, pfn, size, prot) compat_remap_pfn_range(vma, addr, pfn, size, prot)

/* ---- <linux/ktime.h>, <linux/hrtimer.h> ---- */
typedef union {
    s64 tv64;
} ktime_t;
static inline ktime_t ktime_set(long secs, unsigned long nsecs)
{
    ktime_t t;
    t.tv64 = (s64)secs * 1000000000LL + (s64)nsecs;
    return t;
}
enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };
enum hrtimer_mode { HRTIMER_MODE_ABS = 0, HRTIMER_MODE_REL = 1 };
struct hrtimer {
    enum hrtimer_restart (*function)(struct hrtimer *);
    ktime_t period;
    int clock;
};
static inline void hrtimer_init(struct hrtimer *timer, int clock, enum hrtimer_mode mode)
{
    (void)mode;
    memset(timer, 0, sizeof(*timer));
    timer->clock = clock;
}
int compat_hrtimer_start(struct hrtimer *timer, ktime_t period, enum hrtimer_mode mode);
int compat_hrtimer_cancel(struct hrtimer *timer);
#define hrtimer_start(timer, t, mode) compat_hrtimer_start(timer, t, mode)
#define hrtimer_cancel(timer) compat_hrtimer_cancel(timer)
/* The glue calls the callback once per virtual tick; moving the expiry is its business. */
static inline u64 hrtimer_forward_now(struct hrtimer *timer, ktime_t interval)
{
    (void)timer;
    (void)interval;
    return 1;
}

#endif /* CUBOT_LMS2012_COMPAT_H */
