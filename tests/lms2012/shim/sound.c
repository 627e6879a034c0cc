/*
 * The sound driver's busy flag, and how long a sound keeps it set.
 *
 * c_sound sets the Status word of the sound memory to BUSY when it starts a tone or a
 * sound file, and waits (SOUND_READY, also in the stock UI's start-up) until the driver clears
 * it. A brick's d_sound clears it when a tone's duration has passed, when the samples of a
 * file have all been played at 8 kHz, or at once on BREAK. Nothing is heard here; only that
 * timing is kept, on the virtual clock, so programs that wait for a sound wait as long as on
 * a brick. The command bytes are c_sound's: [TONE, level, frequency (2 bytes), duration ms
 * (2 bytes)], [PLAY, level], [SERVICE, samples...], [BREAK].
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#define _GNU_SOURCE
#include "brick.h"

#include <string.h>

#include "lms2012.h"

#define SAMPLE_US 125             /* 8 kHz */
#define BACKLOG_US (64 * SAMPLE_US * 8) /* samples the driver buffers ahead: 64 ms */

static SOUND sound; /* the shared Status word */

static enum { QUIET, TONE_TIMED, TONE_ENDLESS, STREAM } state;
static uint64_t ends_us;    /* end of the tone, or of the samples written so far */
static int stream_started;  /* a PLAY has had samples: an empty queue then ends it */

void *sound_mem(size_t *len)
{
    *len = sizeof sound;
    return &sound;
}

static void done(void)
{
    state = QUIET;
    sound.Status = OK;
}

ssize_t sound_write(const void *buf, size_t n)
{
    const uint8_t *b = buf;
    if (n == 0)
        return 0;
    switch (b[0]) {
    case TONE: {
        unsigned ms = n >= 6 ? (unsigned)(b[4] | b[5] << 8) : 0;
        state = ms ? TONE_TIMED : TONE_ENDLESS;
        ends_us = vclock_now_us + (uint64_t)ms * 1000;
        return (ssize_t)n;
    }
    case PLAY:
        state = STREAM;
        ends_us = vclock_now_us;
        stream_started = 0;
        return n < 2 ? (ssize_t)n : 2;
    case SERVICE: {
        if (state != STREAM || n < 2)
            return 0;
        uint64_t from = ends_us > vclock_now_us ? ends_us : vclock_now_us;
        if (from - vclock_now_us >= BACKLOG_US)
            return 0; /* buffers full: c_sound offers the chunk again later */
        ends_us = from + (uint64_t)(n - 1) * SAMPLE_US;
        stream_started = 1;
        return (ssize_t)(n - 1);
    }
    case BREAK:
        done();
        return (ssize_t)n;
    default:
        return (ssize_t)n;
    }
}

void sound_update(uint64_t now_us)
{
    if ((state == TONE_TIMED || (state == STREAM && stream_started)) && now_us >= ends_us)
        done();
}
