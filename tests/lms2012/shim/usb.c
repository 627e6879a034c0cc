/*
 * The USB cable: direct-command frames in, replies out, as /dev/lms_usbdev does it.
 *
 * c_com polls the device every 2 ms with a zero-timeout select() and reads one HID report
 * per read(); it answers with one write() of a whole report, 1024 bytes at HIGH_SPEED (the
 * speed c_daisy reads from the device's shared memory). Each FRAME cubot sends becomes the
 * next report; each report the VM writes goes back as a REPLY, trimmed to its own length
 * field (+2). While the VM runs a command it does not read (c_com's VmReady gate), so a frame
 * sent meanwhile waits here, in order, exactly as it would wait in a brick's USB buffers.
 *
 * Boot: the shim itself sends the first command, a NOP with reply, before any of cubot's.
 * Its reply can only come when the stock UI program is up and serving direct commands, so
 * that reply (swallowed here) is the moment the brick says BOOTED.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include "brick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lms2012.h"

#define REPORT_SIZE 1024 /* a HIGH_SPEED HID report */

struct frame {
    struct frame *next;
    size_t len;
    uint8_t data[];
};
static struct frame *head, *tail;

static USB_SPEED speed = {.Speed = HIGH_SPEED};
static int probing; /* the boot probe's reply has not come back yet */

/* NOP with a reply and no variables: [len 6][counter][DIRECT_COMMAND_REPLY][0 0][opNOP]. */
static const uint8_t boot_probe[] = {0x06, 0x00, 0xB0, 0x07, 0x00, 0x00, 0x00, 0x01};

void *usb_speed_mem(size_t *len)
{
    *len = sizeof speed;
    return &speed;
}

void usb_queue_frame(const uint8_t *data, size_t n)
{
    struct frame *f = malloc(sizeof *f + n);
    if (!f) {
        link_log("out of memory queueing a frame of %zu bytes; frame dropped", n);
        return;
    }
    f->next = NULL;
    f->len = n;
    memcpy(f->data, data, n);
    if (tail)
        tail->next = f;
    else
        head = f;
    tail = f;
}

void usb_start(void)
{
    probing = 1;
    usb_queue_frame(boot_probe, sizeof boot_probe);
}

int usb_readable(void) { return head != NULL; }

ssize_t usb_read(void *buf, size_t n)
{
    static int said;
    struct frame *f = head;
    if (!f)
        return 0;
    head = f->next;
    if (!head)
        tail = NULL;
    size_t report = n < REPORT_SIZE ? n : REPORT_SIZE;
    if (f->len > report)
        link_log_once(&said, "a frame of %zu bytes is longer than one %zu-byte USB report; "
                             "its end is cut off (reported once)", f->len, report);
    size_t take = f->len < report ? f->len : report;
    memcpy(buf, f->data, take);
    memset((uint8_t *)buf + take, 0, report - take); /* the rest of the report is padding */
    free(f);
    return (ssize_t)report;
}

ssize_t usb_write(const void *buf, size_t n)
{
    const uint8_t *b = buf;
    if (n < 2)
        return (ssize_t)n;
    size_t len = (size_t)(b[0] | b[1] << 8) + 2;
    if (len > n)
        len = n;
    if (probing) {
        char version[16];
        probing = 0;
        snprintf(version, sizeof version, "V%4.2f%c", VERS, SPECIALVERS);
        link_booted(version);
        return (ssize_t)n;
    }
    link_send_at('P', vclock_now_us, b, len);
    return (ssize_t)n;
}
