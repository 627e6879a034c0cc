/*
 * pwm_host.c: the host glue around LEGO's d_pwm.c (see pwm_host.h for the API).
 *
 * How the driver's hardware is stood in for, without changing a line of it:
 *  - every peripheral (eHRPWM1, eCAP0/1, TIMER64P3, GPIO, SYSCFG, PSC, PLL) is a zeroed
 *    memory block handed out by compat's ioremap; the glue finds them again by their
 *    physical base address;
 *  - the tacho INT/DIR inputs and the motor DIR0/DIR1 outputs: on the AM1808 several of
 *    these pins share a GPIO bank, and the driver drives outputs by writing the bank's
 *    set_data/clr_data registers (write-only on hardware, so in plain memory the last
 *    write of any pin in the bank wins and the state of the others is lost). d_pwm.c is
 *    compiled with -finstrument-functions; right after InitGpio returns, the glue gives
 *    each of those pins a private gpio_controller block of its own (the pin table
 *    pOutputPortPin[] is a global of the driver, its pGpio pointers are re-pointed), and
 *    right after each return of SetDirFwd, SetDirRwd, SetBrake and SetCoast (the only
 *    functions that write DIR0/DIR1) it latches the set/clr writes into out_data and
 *    in_data and clears them. So the pin state is exact whatever the call order;
 *  - duty: the compare register the driver's SetDuty[port] writes (eHRPWM1 CMPA/CMPB,
 *    eCAP CAP2), chosen per platform as ModuleInit assigns SetDuty[].
 * The driver-side facts mirrored here (pin table layout and pin order, register offsets,
 * the per-platform PWM assignment) are those of lms2012 V1.04H d_pwm.c.
 */
#include "../compat/compat.h"
#include "../compat/compat_runtime.h"
#include "pwm_host.h"

#include "lms2012.h" /* LEGO's header, from the firmware tree at build time: MOTORDATA, EP2.. */

#define NO_CYG __attribute__((no_instrument_function))

/* ---- what the glue knows of d_pwm.c ---- */

/* d_pwm.c's pin table entry (am1808.h INPIN) and the pin order of its
 * enum OutputPortPins; 7 pins per output port. */
typedef struct {
    int Pin;
    struct gpio_controller *pGpio;
    u32 Mask;
} host_inpin;
_Static_assert(sizeof(host_inpin) == 12, "INPIN layout of a 32-bit build");
enum { PIN_PWM, PIN_DIR0, PIN_DIR1, PIN_INT, PIN_DIR, PIN_SLEEP, PIN_FAULT, PINS_PER_PORT };

extern host_inpin *pOutputPortPin[]; /* indexed by platform */
extern int Hw;                       /* platform ModuleInit chose */
extern int HwInvBits;                /* inversion of the tacho DIR inputs */
extern char *HwId;                   /* the module parameter */

/* module_init/module_exit entries (compat.h) and the functions the hooks watch */
int compat_module_init(void);
void InitGpio(void);
void SetDirFwd(unsigned char Port);
void SetDirRwd(unsigned char Port);
void SetBrake(unsigned char Port);
void SetCoast(unsigned char Port);

/* physical bases, as Device1Init maps them */
#define PHYS_EHRPWM1 0x01F02000UL
#define PHYS_ECAP0 0x01F06000UL
#define PHYS_ECAP1 0x01F07000UL
#define PHYS_TIMER64P3 0x01F0D000UL
/* 16-bit register indices: eHRPWM CMPA/CMPB, eCAP CAP2; 32-bit index of TIMER64 TIM34 */
#define EHRPWM_CMPA 0x9
#define EHRPWM_CMPB 0xA
#define ECAP_CAP2 6
#define TIMER64_TIM34 5

enum duty_reg { MA, MB, MC, MD }; /* SetDutyMA..MD: eHRPWM1 CMPA, CMPB, eCAP1, eCAP0 CAP2 */

#define PORTS 4

/* ---- state ---- */

static int initialised;
static int pins_private; /* the InitGpio hook ran */
static unsigned ambiguous_latches;
static struct gpio_controller pin_block[PORTS][PINS_PER_PORT];
static u16 *ehrpwm1, *ecap0, *ecap1;
static u32 *timer64p3;
static enum duty_reg duty_of_port[PORTS];
static const struct file_operations *pwm_fops, *motor_fops;
static void *motor_mem;
static size_t motor_len;

/* ---- instrumentation hooks (d_pwm.c is compiled with -finstrument-functions) ---- */

static NO_CYG host_inpin *pin_of(int port, int pin)
{
    return &pOutputPortPin[Hw][port * PINS_PER_PORT + pin];
}

/* Give DIR0, DIR1, INT and DIR of every port a block of its own; inputs at reset. */
static NO_CYG void make_pins_private(void)
{
    static const int watched[] = {PIN_DIR0, PIN_DIR1, PIN_INT, PIN_DIR};
    for (int port = 0; port < PORTS; port++) {
        for (unsigned i = 0; i < sizeof watched / sizeof watched[0]; i++) {
            host_inpin *p = pin_of(port, watched[i]);
            struct gpio_controller *g = &pin_block[port][watched[i]];
            memset(g, 0, sizeof *g);
            g->dir = p->Mask; /* a GPIO pin comes out of reset as an input */
            p->pGpio = g;
        }
    }
    pins_private = 1;
}

/* Apply the set/clr writes of the DIR0/DIR1 pins to their latch and pin level. */
static NO_CYG void latch_outputs(void)
{
    for (int port = 0; port < PORTS; port++) {
        for (int pin = PIN_DIR0; pin <= PIN_DIR1; pin++) {
            struct gpio_controller *g = &pin_block[port][pin];
            u32 m = pin_of(port, pin)->Mask;
            if ((g->set_data & m) && (g->clr_data & m))
                ambiguous_latches++;
            if (g->set_data & m)
                g->out_data |= m;
            if (g->clr_data & m)
                g->out_data &= ~m;
            g->set_data = 0;
            g->clr_data = 0;
            /* an output reads back its latch; a floating pin reads low */
            if (g->dir & m)
                g->in_data &= ~m;
            else
                g->in_data = (g->in_data & ~m) | (g->out_data & m);
        }
    }
}

NO_CYG void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn;
    (void)site;
}

NO_CYG void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    if (fn == (void *)SetDirFwd || fn == (void *)SetDirRwd || fn == (void *)SetBrake ||
        fn == (void *)SetCoast)
        latch_outputs();
    else if (fn == (void *)InitGpio)
        make_pins_private();
}

/* ---- API ---- */

void pwmhost_set_log(void (*fn)(const char *line)) { compat_set_log(fn); }

int pwmhost_init(void)
{
    if (initialised)
        return 0;
    compat_boot();
    HwId = PWMHOST_HWID;
    compat_module_init();

    if (!pins_private) {
        compat_log("pwmhost: InitGpio exit hook never ran (d_pwm.c needs -finstrument-functions)");
        return -1;
    }
    const struct miscdevice *pwm = compat_misc_find(PWM_DEVICE);
    const struct miscdevice *motor = compat_misc_find(MOTOR_DEVICE);
    if (!pwm || !motor || !pwm->fops->write || !pwm->fops->read || !motor->fops->mmap) {
        compat_log("pwmhost: the driver did not register %s and %s", PWM_DEVICE, MOTOR_DEVICE);
        return -1;
    }
    pwm_fops = pwm->fops;
    motor_fops = motor->fops;
    if (!compat_active_timer()) {
        compat_log("pwmhost: the driver did not start its hrtimer");
        return -1;
    }
    for (int port = 0; port < PORTS; port++) {
        irq_handler_t h;
        void *dev;
        if (compat_irq_lookup(gpio_to_irq(pin_of(port, PIN_INT)->Pin), &h, &dev) != 0) {
            compat_log("pwmhost: no tacho interrupt for port %c", 'A' + port);
            return -1;
        }
    }
    ehrpwm1 = compat_region(PHYS_EHRPWM1, NULL);
    ecap0 = compat_region(PHYS_ECAP0, NULL);
    ecap1 = compat_region(PHYS_ECAP1, NULL);
    timer64p3 = compat_region(PHYS_TIMER64P3, NULL);
    if (!ehrpwm1 || !ecap0 || !ecap1 || !timer64p3) {
        compat_log("pwmhost: the driver did not map its PWM and timer blocks");
        return -1;
    }

    /* SetDuty[] as ModuleInit assigns it: EP2 boards swap A<->B and C<->D */
    static const enum duty_reg straight[PORTS] = {MA, MB, MC, MD};
    static const enum duty_reg swapped[PORTS] = {MB, MA, MD, MC};
    memcpy(duty_of_port, Hw == EP2 ? swapped : straight, sizeof duty_of_port);

    /* what c_output's mmap of /dev/lms_motor gets */
    struct vm_area_struct vma = {0, sizeof(MOTORDATA) * OUTPUTS, NULL};
    if (motor_fops->mmap(NULL, &vma) != 0 || !vma.vm_private_data) {
        compat_log("pwmhost: %s mmap failed", MOTOR_DEVICE);
        return -1;
    }
    motor_mem = vma.vm_private_data;
    motor_len = vma.vm_end - vma.vm_start;

    initialised = 1;
    return 0;
}

/* Device1Write and Device2Write copy the caller's bytes into a 20-byte stack buffer. */
#define DRIVER_WRITE_MAX 20

ssize_t pwmhost_pwm_write(const char *buf, size_t n)
{
    if (!initialised || n > DRIVER_WRITE_MAX)
        return -EINVAL;
    loff_t pos = 0;
    return pwm_fops->write(NULL, buf, n, &pos);
}

ssize_t pwmhost_motor_write(const char *buf, size_t n)
{
    if (!initialised || n > DRIVER_WRITE_MAX || !motor_fops->write)
        return -EINVAL;
    loff_t pos = 0;
    return motor_fops->write(NULL, buf, n, &pos);
}

ssize_t pwmhost_pwm_read(char *buf, size_t n)
{
    if (!initialised)
        return -EINVAL;
    /* Device1Read snprintf's twice into the caller's buffer and, asked for fewer bytes
     * than its text, writes past the end (its second size goes negative). Let it write
     * into room of ours, then hand over the n bytes asked for. */
    char room[64] = {0};
    size_t count = n < 32 ? n : 32;
    loff_t pos = 0;
    ssize_t r = pwm_fops->read(NULL, room, count, &pos);
    memcpy(buf, room, count);
    return r > (ssize_t)count ? (ssize_t)count : r;
}

void *pwmhost_motor_mem(size_t *len)
{
    if (len)
        *len = initialised ? motor_len : 0;
    return initialised ? motor_mem : NULL;
}

void pwmhost_set_timer_us(uint64_t t_us)
{
    if (!timer64p3)
        return;
    /* the 32-bit counter below the >> 8 runs 256 times faster; it wraps at 2^32, so the
     * driver's view wraps at 24 bits */
    const uint64_t raw_hz = (uint64_t)PWMHOST_TIMER_HZ * 256u;
    uint64_t secs = t_us / 1000000u, rest = t_us % 1000000u;
    uint64_t raw = secs * raw_hz + rest * raw_hz / 1000000u;
    timer64p3[TIMER64_TIM34] = (u32)raw;
}

void pwmhost_edge(int port, int dir)
{
    if (!initialised || port < 0 || port >= PORTS || dir == 0)
        return;
    host_inpin *ip = pin_of(port, PIN_INT), *dp = pin_of(port, PIN_DIR);
    struct gpio_controller *gi = &pin_block[port][PIN_INT], *gd = &pin_block[port][PIN_DIR];

    gi->in_data ^= ip->Mask;
    int int_high = (gi->in_data & ip->Mask) != 0;
    /* IntA..IntD count up when INT equals the DIR level the driver reads, which is the
     * pin level XOR HwInvBits */
    int dir_read = dir > 0 ? int_high : !int_high;
    int dir_pin = dir_read ^ ((HwInvBits & (int)dp->Mask) != 0);
    if (dir_pin)
        gd->in_data |= dp->Mask;
    else
        gd->in_data &= ~dp->Mask;

    irq_handler_t handler;
    void *dev;
    unsigned irq = gpio_to_irq(ip->Pin);
    if (compat_irq_lookup(irq, &handler, &dev) == 0)
        handler((int)irq, dev);
}

void pwmhost_tick(void)
{
    struct hrtimer *t = compat_active_timer();
    if (t && t->function)
        t->function(t);
    if (ambiguous_latches) {
        compat_log("pwmhost: %u DIR0/DIR1 pin write(s) both set and cleared between two hooks",
                   ambiguous_latches);
        ambiguous_latches = 0;
    }
}

void pwmhost_output(int port, uint16_t *duty, uint8_t *drive)
{
    uint16_t d = 0;
    uint8_t dr = PWMHOST_COAST;
    if (initialised && port >= 0 && port < PORTS) {
        switch (duty_of_port[port]) {
        case MA: d = ehrpwm1[EHRPWM_CMPA]; break;
        case MB: d = ehrpwm1[EHRPWM_CMPB]; break;
        case MC: d = ecap1[ECAP_CAP2]; break;
        case MD: d = ecap0[ECAP_CAP2]; break;
        }
        const struct gpio_controller *g0 = &pin_block[port][PIN_DIR0];
        const struct gpio_controller *g1 = &pin_block[port][PIN_DIR1];
        u32 m0 = pin_of(port, PIN_DIR0)->Mask, m1 = pin_of(port, PIN_DIR1)->Mask;
        int float0 = (g0->dir & m0) != 0, float1 = (g1->dir & m1) != 0;
        int high0 = !float0 && (g0->out_data & m0), high1 = !float1 && (g1->out_data & m1);
        if (high0 && high1)
            dr = PWMHOST_BRAKE;
        else if (high0 && float1)
            dr = PWMHOST_FORWARD;
        else if (float0 && high1)
            dr = PWMHOST_REVERSE;
        else
            dr = PWMHOST_COAST;
    }
    if (duty)
        *duty = d;
    if (drive)
        *drive = dr;
}
