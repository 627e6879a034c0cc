/*
 * The ports' shared memory: what LEGO's d_analog, d_uart, d_iic and d_ui modules would show.
 *
 * Analog memory (d_analog): which device sits on each port and the battery. A motor on an
 * output port reads as a tacho connection (CONN_OUTPUT_TACHO) of type TACHO or MINITACHO;
 * an EV3 UART sensor on an input port as CONN_INPUT_UART with a still unknown type (the
 * sensor names itself over the UART); an empty port as CONN_NONE / TYPE_NONE, which is what
 * makes GET_TYPEMODE answer 126 there as on a brick (all-zero memory would say 125).
 * The battery voltage is the ADC count of the battery-voltage amplifier: c_ui computes
 * Vbatt = count * 5000 / 4095 / 1000 / 0.5 + Ibatt_term + 0.05 V (c_ui.c cUiUpdatePower); the
 * current channels read 0, so the count below makes GET_VBATT report battery_mv.
 *
 * UART memory (d_uart), per port with a sensor: after c_input declares the port a UART
 * port (ioctl UART_SET_CONN), the sensor "connects": UART_PORT_CHANGED is raised and
 * c_input reads the sensor's modes one by one (UART_READ_MODE_INFO), from the '*' lines of
 * typedata.rcf, which hold what the sensors report about themselves. From then on, every
 * tick puts the latest sample the world reported into the port's ring (Raw[LogIn], Actual,
 * LogIn++) and raises UART_DATA_READY, but only while the sensor sends in the mode the VM
 * asked for. A mode change (UART_SET_CONN with another mode) clears UART_DATA_READY and is
 * passed to cubot as the TICK's mode request; until the WORLD says the sensor sends in the
 * new mode, the port has no data, c_input keeps the device BUSY and READY_RAW blocks
 * (c_input.c cInputDcmUpdate: DevStatus is OK only with UART_DATA_READY set and
 * UART_PORT_CHANGED clear). That is how a real brick behaves while a sensor switches.
 *
 * This file includes LEGO's lms2012.h from the build copy (never from the repository) so the
 * memory layouts are exactly the VM's.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include "brick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lms2012.h"

/* What /dev/lms_ui's read() gives: the hardware version of a retail brick, "V0.60". */
#define HW_VERSION "V0.60"

/* Page-aligned blocks, so they are what mmap would give. */
static ANALOG *analog;
static UART *uart;
static IIC *iic;
static UI *ui;

/* One UART sensor's link state, as d_uart keeps it. */
struct uart_port {
    int present;        /* CONFIG put a UART sensor here */
    int configured;     /* c_input declared the port a UART port */
    int announced;      /* the sensor has sent its mode info (UART_PORT_CHANGED raised) */
    int initialised;    /* the sensor has sent data at least once */
    int mode;           /* the mode the VM asked for (the driver's mode) */
    int request;        /* a mode change not yet told to cubot, or -1 */
    TYPES info[MAX_DEVICE_MODES]; /* what the sensor reports about each mode */
    int modes;          /* how many modes it has */
    int changed[MAX_DEVICE_MODES]; /* mode info not yet read by c_input */
};
static struct uart_port uport[BRICK_PORTS];

static void *block(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        link_log("cannot allocate %zu bytes of device memory", size);
        _exit(2);
    }
    return p;
}

/* The count the battery-voltage channel must read for c_ui to compute `mv` (see top). */
static DATA16 battery_count(uint32_t mv)
{
    if (mv <= 50)
        return 0;
    uint32_t count = ((mv - 50) * 4095u + 5000u) / 10000u;
    return (DATA16)(count > 4095 ? 4095 : count);
}

/* Reads the '*' lines of typedata.rcf (what EV3 UART sensors report about themselves:
 * name, data sets, format, figures, decimals, ranges, symbol) for sensor `type`. The columns
 * are those of c_input's own typedata lines; '#' marks modes the UI hides. */
static int read_sensor_info(int type, TYPES info[MAX_DEVICE_MODES])
{
    FILE *f = fopen("../sys/settings/typedata.rcf", "r");
    if (!f) {
        link_log("cannot read ../sys/settings/typedata.rcf: no sensor mode info");
        return 0;
    }
    char line[256];
    int modes = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        if (*p++ != '*')
            continue;
        while (*p == ' ' || *p == '#')
            p++;
        unsigned t, mode, sets, format, figures, decimals, views, conn, pins, time, id;
        float raw_min, raw_max, pct_min, pct_max, si_min, si_max;
        char name[64], symbol[64];
        if (sscanf(p, "%u %u %63s %u %u %u %u %u %u %x %f %f %f %f %f %f %u %u %63s", &t, &mode,
                   name, &sets, &format, &figures, &decimals, &views, &conn, &pins, &raw_min,
                   &raw_max, &pct_min, &pct_max, &si_min, &si_max, &time, &id, symbol) != 19)
            continue;
        if ((int)t != type || mode >= MAX_DEVICE_MODES)
            continue;
        TYPES *m = &info[mode];
        memset(m, 0, sizeof *m);
        snprintf((char *)m->Name, sizeof m->Name, "%.*s", (int)sizeof m->Name - 1, name);
        m->Type = (DATA8)t;
        m->Connection = CONN_INPUT_UART;
        m->Mode = (DATA8)mode;
        m->DataSets = (DATA8)sets;
        m->Format = (DATA8)format;
        m->Figures = (DATA8)figures;
        m->Decimals = (DATA8)decimals;
        m->Views = (DATA8)views;
        m->RawMin = raw_min, m->RawMax = raw_max;
        m->PctMin = pct_min, m->PctMax = pct_max;
        m->SiMin = si_min, m->SiMax = si_max;
        m->InvalidTime = (UWORD)time;
        m->IdValue = (UWORD)id;
        m->Pins = (DATA8)pins;
        if (strcmp(symbol, "_") != 0)
            snprintf((char *)m->Symbol, sizeof m->Symbol, "%.*s", (int)sizeof m->Symbol - 1, symbol);
        if ((int)mode + 1 > modes)
            modes = (int)mode + 1;
    }
    fclose(f);
    return modes;
}

void ports_start(void)
{
    analog = block(sizeof(ANALOG));
    uart = block(sizeof(UART) > sizeof(IIC) ? sizeof(UART) : sizeof(IIC)); /* c_input maps IIC with sizeof(UART) */
    iic = block(sizeof(UART) > sizeof(IIC) ? sizeof(UART) : sizeof(IIC));
    ui = block(sizeof(UI));

    for (int port = 0; port < BRICK_PORTS; port++) {
        switch (brick_cfg.out_type[port]) {
        case 7:
        case 8:
            analog->OutConn[port] = CONN_OUTPUT_TACHO;
            analog->OutDcm[port] = brick_cfg.out_type[port] == 7 ? TYPE_TACHO : TYPE_MINITACHO;
            break;
        default:
            if (brick_cfg.out_type[port] != 0)
                link_log("output port %c: device type %u is not simulated; the port reads empty",
                         'A' + port, brick_cfg.out_type[port]);
            analog->OutConn[port] = CONN_NONE;
            analog->OutDcm[port] = TYPE_NONE;
        }
        struct uart_port *u = &uport[port];
        u->request = -1;
        int type = brick_cfg.in_type[port];
        if (type == 29 || type == 33)
            u->modes = read_sensor_info(type, u->info);
        if (u->modes > 0) {
            u->present = 1;
            analog->InConn[port] = CONN_INPUT_UART;
            analog->InDcm[port] = TYPE_UNKNOWN; /* the sensor says what it is over the UART */
        } else {
            if (type != 0)
                link_log("input port %d: device type %d is not simulated; the port reads empty",
                         port + 1, type);
            analog->InConn[port] = CONN_NONE;
            analog->InDcm[port] = TYPE_NONE;
        }
    }
    analog->Cell123456 = battery_count(brick_cfg.battery_mv);
    analog->BatteryCurrent = 0;
    analog->MotorCurrent = 0;
}

void *ports_mem(enum port_mem which, size_t *len)
{
    switch (which) {
    case MEM_ANALOG:
        *len = sizeof(ANALOG);
        return analog;
    case MEM_UART:
        *len = sizeof(UART);
        return uart;
    case MEM_IIC:
        *len = sizeof(IIC);
        return iic;
    case MEM_UI:
        *len = sizeof(UI);
        return ui;
    }
    return NULL;
}

ssize_t ports_ui_read(char *buf, size_t n)
{
    int len = snprintf(buf, n, "%s", HW_VERSION);
    return len < 0 ? 0 : (ssize_t)len;
}

/* UART_SET_CONN: c_input tells every port's connection, type and mode at once. */
static void set_conn(const DEVCON *dc)
{
    for (int port = 0; port < BRICK_PORTS; port++) {
        struct uart_port *u = &uport[port];
        if (dc->Connection[port] != CONN_INPUT_UART || !u->present) {
            uart->Status[port] &= ~UART_DATA_READY;
            u->configured = u->announced = u->initialised = 0;
            continue;
        }
        if (!u->configured) {
            u->configured = 1; /* the sensor announces itself at the next tick */
            u->mode = 0;       /* and starts in mode 0, as every EV3 UART sensor does */
            continue;
        }
        /* As d_uart does: a mode change only once the sensor has been heard from. */
        if (u->initialised && u->mode != dc->Mode[port]) {
            u->mode = dc->Mode[port];
            u->request = u->mode;
            uart->Status[port] &= ~UART_DATA_READY;
        }
    }
}

int ports_uart_ioctl(unsigned long request, void *arg)
{
    if (request == UART_SET_CONN) {
        set_conn((const DEVCON *)arg);
        return 0;
    }
    if (request != UART_READ_MODE_INFO && request != UART_NACK_MODE_INFO &&
        request != UART_CLEAR_CHANGED)
        return 0;
    UARTCTL *ctl = arg;
    if (ctl->Port < 0 || ctl->Port >= BRICK_PORTS)
        return 0;
    struct uart_port *u = &uport[ctl->Port];
    int mode = ctl->Mode;
    if (request == UART_CLEAR_CHANGED) {
        uart->Status[ctl->Port] &= ~UART_PORT_CHANGED;
    } else if (mode >= 0 && mode < MAX_DEVICE_MODES) {
        if (request == UART_NACK_MODE_INFO) {
            u->changed[mode] = 1; /* c_input could not take it yet: offer it again */
        } else {
            /* A mode's info is given once; asked again it reads as "nothing new". */
            if (mode < u->modes)
                ctl->TypeData = u->info[mode];
            else
                memset(&ctl->TypeData, 0, sizeof ctl->TypeData);
            if (!u->changed[mode])
                ctl->TypeData.Name[0] = 0;
            u->changed[mode] = 0;
        }
    }
    return 0;
}

/* One sample in the sensor's own format, as it travels on the UART. */
static void encode_sample(const TYPES *info, const int16_t value[4], DATA8 out[UART_DATA_LENGTH])
{
    memset(out, 0, UART_DATA_LENGTH);
    int sets = info->DataSets < 4 ? info->DataSets : 4;
    for (int i = 0; i < sets; i++) {
        switch (info->Format & 0x0F) {
        case DATA_8:
            out[i] = (DATA8)value[i];
            break;
        case DATA_16: {
            DATA16 v = value[i];
            memcpy(out + 2 * i, &v, sizeof v);
            break;
        }
        case DATA_32: {
            DATA32 v = value[i];
            memcpy(out + 4 * i, &v, sizeof v);
            break;
        }
        case DATA_F: {
            DATAF v = value[i];
            memcpy(out + 4 * i, &v, sizeof v);
            break;
        }
        }
    }
}

void ports_sensor_data(const struct world *w)
{
    for (int port = 0; port < BRICK_PORTS; port++) {
        struct uart_port *u = &uport[port];
        if (!u->configured)
            continue;
        if (!u->announced) {
            /* The sensor's mode info "arrives": c_input reads it mode by mode. */
            u->announced = 1;
            for (int m = 0; m < MAX_DEVICE_MODES; m++)
                u->changed[m] = m < u->modes;
            uart->Status[port] |= UART_PORT_CHANGED;
            continue;
        }
        const struct world_sensor *s = &w->sensor[port];
        if (!(s->flags & WORLD_DATA_VALID) || (uart->Status[port] & UART_PORT_CHANGED))
            continue;
        u->initialised = 1;
        if (s->mode != u->mode || u->mode >= u->modes)
            continue; /* still sending in the old mode: the port has no data */
        UWORD in = uart->LogIn[port];
        encode_sample(&u->info[u->mode], s->value, uart->Raw[port][in]);
        uart->Actual[port] = in;
        uart->Repeat[port][in] = 0;
        uart->LogIn[port] = (UWORD)((in + 1) % DEVICE_LOGBUF_SIZE);
        uart->Status[port] |= UART_DATA_READY;
    }
}

void ports_take_mode_requests(uint8_t req[BRICK_PORTS])
{
    for (int port = 0; port < BRICK_PORTS; port++) {
        req[port] = uport[port].request < 0 ? 0xFF : (uint8_t)uport[port].request;
        uport[port].request = -1;
    }
}
