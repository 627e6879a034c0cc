//! EV3 direct commands: the pure codec. Encodes commands and decodes replies for the
//! driver, and decodes commands and encodes replies for the simulated brick. No I/O.
//!
//! Level: robot (depends on nothing else in the crate).
//!
//! The sections below are the parts of the protocol this code relies on. The byte dumps
//! under [Worked examples](#worked-examples) are the golden tests of this module (its
//! `tests.rs`) and of the simulated brick.
//!
//! ## Sources
//!
//! * LEGO MINDSTORMS "EV3 Communication Developer Kit" (2013): message framing, command
//!   and reply types.
//! * LEGO MINDSTORMS "EV3 Firmware Developer Kit" and the LMS2012 firmware source LEGO
//!   published (mirrored on GitHub as `mindboards/ev3sources`): `c_com.h`/`c_com.c`
//!   (framing, reply types, largest message, what happens to a command that arrives while
//!   another runs), `bytecodes.h` (opcode numbers, parameter bit layout), `lms2012.c`
//!   (parameter decoding), `c_output.c` and `c_input.c` (parameters and meaning of the
//!   motor and sensor opcodes), `typedata.rcf` (device types and modes).
//! * Christoph Gaukel's `ev3_dc` Python package and its documentation
//!   (`ChristophGaukel/ev3-python3`): request/reply logs that several examples below
//!   follow, and the shortest-constant rule.
//!
//! All multi-byte numbers on the wire and in global memory are little-endian; floats are
//! IEEE-754 single precision.
//!
//! ## Framing
//!
//! Every message, in either direction, starts with a two-byte length that counts the bytes
//! *after* it, so a reader takes two bytes, then exactly that many more. A direct command:
//!
//! | Bytes | Field   | Contents |
//! |-------|---------|----------|
//! | 0–1   | length  | `u16`: message size − 2 |
//! | 2–3   | counter | `u16` picked by the host (the driver counts up and wraps); the reply carries the same value |
//! | 4     | type    | see [Message types](#message-types) |
//! | 5–6   | memory  | `u16`: bits 0–9 = bytes of global memory (0..1023), bits 10–15 = bytes of local memory (0..63), i.e. `local << 10 \| global` |
//! | 7…    | operations | opcodes with their parameters, executed in order |
//!
//! Memory header examples: nothing → `00 00`; 4 global bytes → `04 00`; 12 global and 4
//! local → `0x100C` → `0C 10`.
//!
//! A direct reply:
//!
//! | Bytes | Field   | Contents |
//! |-------|---------|----------|
//! | 0–1   | length  | `u16`: 3 + bytes of global memory |
//! | 2–3   | counter | copied from the command |
//! | 4     | status  | `0x02` ok, `0x04` error |
//! | 5…    | globals | the command's whole global memory, whatever its operations left there |
//!
//! A reply to a command without global memory is five bytes, `03 00 cc cc 02`. No message
//! may exceed 1024 bytes including the length field ([`MAX_MESSAGE`]; `MAX_MSG_SIZE` in
//! `c_com.h`). The decoder refuses a frame whose length field disagrees with its size.
//!
//! ## Message types
//!
//! | Byte | Name | Direction | Handled here |
//! |------|------|-----------|--------------|
//! | `0x00` | DIRECT_COMMAND_REPLY    | host → brick | encoded, decoded |
//! | `0x80` | DIRECT_COMMAND_NO_REPLY | host → brick | encoded, decoded |
//! | `0x02` | DIRECT_REPLY            | brick → host | encoded, decoded |
//! | `0x04` | DIRECT_REPLY_ERROR      | brick → host | encoded, decoded |
//! | `0x01` / `0x81` | SYSTEM_COMMAND_REPLY / _NO_REPLY | host → brick | recognised only |
//! | `0x05` | SYSTEM_REPLY_ERROR      | brick → host | encoded by the simulated brick |
//!
//! Bit 7 of a command's type byte means "no reply wanted". System commands (file transfer,
//! mailboxes) are not used: after the type byte comes a system command byte, and the
//! simulated brick answers any of them that wants a reply with length, counter, `0x05`,
//! the echoed system command byte and status `0x0A` (unknown error).
//!
//! ## Parameter encoding
//!
//! Each parameter opens with a descriptor byte whose bit 7 selects the short (one byte in
//! all) or the long form.
//!
//! | Short form bits | Name | Meaning |
//! |-----------------|------|---------|
//! | `0 0 s v v v v v` | LC0 | constant, 6-bit two's complement in bits 0–5 (bit 5 is the sign): −32..31 |
//! | `0 1 0 i i i i i` | LV0 | local variable at byte offset 0..31 |
//! | `0 1 1 i i i i i` | GV0 | global variable at byte offset 0..31 |
//!
//! In the long form bit 6 marks a variable (clear: a constant), bit 5 a global variable
//! (clear: local), bits 3–4 the address and handle forms used for arrays (the decoder
//! refuses them), and bits 0–2 say what follows: 1 → one byte, 2 → two, 3 → four, 0 or 4
//! → a zero-terminated string (constants only).
//!
//! | First byte | Name | Followed by |
//! |------------|------|-------------|
//! | `0x81` / `0x82` / `0x83` | LC1 / LC2 / LC4 | a signed 8 / 16 / 32-bit constant |
//! | `0x84` | LCS | ASCII bytes, then `0x00` |
//! | `0xC1` / `0xC2` / `0xC3` | LV1 / LV2 / LV4 | an unsigned local offset of 1 / 2 / 4 bytes |
//! | `0xE1` / `0xE2` / `0xE3` | GV1 / GV2 / GV4 | an unsigned global offset of 1 / 2 / 4 bytes |
//!
//! The brick's virtual machine widens a constant to 32 bits and the opcode then reads it as
//! the type it expects, so any constant form may carry any integer parameter whose value
//! fits. The decoder therefore accepts every form above; [`push_const`] writes the shortest,
//! as `ev3_dc` does:
//!
//! | Value | Form | Size |
//! |-------|------|------|
//! | −32 ..= 31 | LC0 | 1 byte |
//! | −127 ..= 127 | LC1 | 2 bytes |
//! | −32767 ..= 32767 | LC2 | 3 bytes |
//! | anything else | LC4 | 5 bytes |
//!
//! [`push_global`] writes GV0 for offsets below 32, GV1 below 256, GV2 above. Output
//! parameters (marked `*` in [Opcodes](#opcodes)) must be variables; this code always gives
//! global ones. Reference encodings (the first test below checks all of them):
//!
//! | Value | Bytes | Value | Bytes |
//! |-------|-------|-------|-------|
//! | 0 | `00` | 270 | `82 0E 01` |
//! | 31 | `1F` | −270 | `82 F2 FE` |
//! | −1 | `3F` | 540 | `82 1C 02` |
//! | −5 | `3B` | 1080 | `82 38 04` |
//! | −32 | `20` | −1080 | `82 C8 FB` |
//! | 32 | `81 20` | 32767 | `82 FF 7F` |
//! | −33 | `81 DF` | 32768 | `83 00 80 00 00` |
//! | 60 | `81 3C` | −40000 | `83 C0 63 FF FF` |
//! | 100 | `81 64` | GV0 at 0 / 4 / 8 | `60` / `64` / `68` |
//! | −100 | `81 9C` | LV0 at 0 | `40` |
//!
//! ## Global memory
//!
//! Value types: DATA8 = `i8`, DATA16 = `i16`, DATA32 = `i32`, DATAF = `f32`. A value at
//! global offset `o` is at byte `5 + o` of the reply. The firmware source asks for 4-byte
//! values at offsets divisible by 4; [`DirectCommand`] hands out slots in the order the
//! operations are added and rounds each 4-byte slot up to the next multiple of 4 (so
//! OUTPUT_READ puts its speed byte at 0 and its count at 4, see E14). Nothing promises
//! that global memory starts zeroed, so every byte the code reads is one an operation
//! wrote.
//!
//! ## Ports
//!
//! | Used as | A | B | C | D |
//! |---------|---|---|---|---|
//! | NOS, a bit field (most OUTPUT_* opcodes; several bits = several motors) | `0x01` | `0x02` | `0x04` | `0x08` |
//! | NO, one port number (OUTPUT_READ, OUTPUT_GET_COUNT) | 0 | 1 | 2 | 3 |
//! | the motor as an input device (INPUT_DEVICE) | 16 | 17 | 18 | 19 |
//!
//! All four motors are `0x0F`. Sensor ports 1..4 are input numbers 0..3. Mixing the two
//! motor encodings is an easy bug (motor C is 4 as a bit field but 2 as a number, and the
//! firmware refuses numbers from 4 up), hence [`OutputPort::bit`], [`OutputPort::no`] and
//! [`OutputPort::as_input`]. LAYER, the position of a brick in a daisy chain, is always 0
//! (the brick at the other end of the link).
//!
//! ## Device types
//!
//! | Type | Device | Modes this code uses |
//! |------|--------|----------------------|
//! | 7 | EV3 large motor | 0: position in degrees |
//! | 8 | EV3 medium motor | 0: position in degrees |
//! | 16 | EV3 touch sensor | — |
//! | 29 | EV3 colour sensor | 4: RGB-RAW, three values |
//! | 30 | EV3 ultrasonic sensor | — |
//! | 33 | EV3 infrared sensor | 0: proximity 0..100 |
//! | 126 | nothing connected (what GET_TYPEMODE reports for an empty port) | — |
//!
//! In RGB-RAW mode the sensor lights all three LEDs and returns three integers on a nominal
//! 0..1020 scale, but real readings stay far lower (a white sticker reads about
//! (253, 292, 183) in the `ev3_dc` documentation) and blue is the weakest channel, so
//! readings are balanced against a white reference later, never used as absolute colours.
//!
//! ## Opcodes
//!
//! LAYER, NOS, NO, BRAKE (0 coast, 1 brake), SPEED and POWER (−100..100 percent) are DATA8;
//! STEPn (degrees) and TIMEn (milliseconds) are DATA32; `*X` is an output written into
//! global memory. The builder methods of [`DirectCommand`] emit the opcodes marked ✓; the
//! simulated brick interprets all of them.
//!
//! | Code | Name | Parameters | Effect | Built |
//! |------|------|------------|--------|-------|
//! | `0x01` | NOP | — | nothing; a ping | ✓ |
//! | `0x82 0x1B` | UI_WRITE LED | PATTERN | 0 off, 1 green, 2 red, 3 orange; 4–6 the same colours flashing, 7–9 pulsing | ✓ |
//! | `0x81 0x01` | UI_READ GET_VBATT | *VOLTS (DATAF) | battery voltage | ✓ |
//! | `0x81 0x12` | UI_READ GET_LBATT | *PCT (DATA8) | battery level 0..100, see [Brick queries](#brick-queries) | ✓ |
//! | `0x81 0x0A` | UI_READ GET_FW_VERS | LENGTH (DATA8), *TEXT (string) | firmware version, e.g. `V1.09H` | ✓ |
//! | `0x81 0x09` | UI_READ GET_HW_VERS | LENGTH, *TEXT | hardware version, e.g. `V0.60` | ✓ |
//! | `0xD3 0x0D` | COM_GET GET_BRICKNAME | LENGTH, *TEXT | the brick's name (`EV3` unless renamed) | ✓ |
//! | `0x94 0x01` | SOUND TONE | VOLUME (0..100), FREQ (DATA16, Hz), DURATION (DATA16, ms) | a beep | ✓ |
//! | `0x96` | SOUND_READY | — | waits for the tone to end | |
//! | `0x85` | TIMER_WAIT | TIME (DATA32, ms), *TIMER | arms a timer in a variable | |
//! | `0x86` | TIMER_READY | TIMER | waits for that timer | |
//! | `0xA2` | OUTPUT_RESET | LAYER, NOS | zeroes the movement count and the firmware's position correction; leaves the sensor count alone | ✓ |
//! | `0xA3` | OUTPUT_STOP | LAYER, NOS, BRAKE | stops now | ✓ |
//! | `0xA4` | OUTPUT_POWER | LAYER, NOS, POWER | unregulated duty cycle, applied by START | ✓ |
//! | `0xA5` | OUTPUT_SPEED | LAYER, NOS, SPEED | regulated speed, applied by START | ✓ |
//! | `0xA6` | OUTPUT_START | LAYER, NOS | starts the motors with the values set | ✓ |
//! | `0xA7` | OUTPUT_POLARITY | LAYER, NOS, POL (−1, 0 = toggle, 1) | direction convention, see [Polarity](#polarity) | ✓ |
//! | `0xA8` | OUTPUT_READ | LAYER, NO, *SPEED (DATA8), *COUNT (DATA32) | present speed and movement count | ✓ |
//! | `0xA9` | OUTPUT_TEST | LAYER, NOS, *BUSY (DATA8) | 1 while any selected motor still runs a step or time job | ✓ |
//! | `0xAA` | OUTPUT_READY | LAYER, NOS | holds the command until those jobs end | ✓ |
//! | `0xAC` | OUTPUT_STEP_POWER | LAYER, NOS, POWER, STEP1, STEP2, STEP3, BRAKE | as STEP_SPEED, unregulated | ✓ |
//! | `0xAD` | OUTPUT_TIME_POWER | LAYER, NOS, POWER, TIME1, TIME2, TIME3, BRAKE | as TIME_SPEED, unregulated | ✓ |
//! | `0xAE` | OUTPUT_STEP_SPEED | LAYER, NOS, SPEED, STEP1, STEP2, STEP3, BRAKE | a move *relative* to where the motor is: STEP1 degrees speeding up, STEP2 at SPEED, STEP3 slowing down; the sign of SPEED is the direction, the steps are never negative; starts at once | ✓ |
//! | `0xAF` | OUTPUT_TIME_SPEED | LAYER, NOS, SPEED, TIME1, TIME2, TIME3, BRAKE | the same profile in milliseconds | ✓ |
//! | `0xB2` | OUTPUT_CLR_COUNT | LAYER, NOS | zeroes the sensor count | ✓ |
//! | `0xB3` | OUTPUT_GET_COUNT | LAYER, NO, *COUNT (DATA32) | sensor count in degrees | ✓ |
//! | `0x99 0x05` | INPUT_DEVICE GET_TYPEMODE | LAYER, NO, *TYPE (DATA8), *MODE (DATA8) | what is plugged in | ✓ |
//! | `0x99 0x0B` | INPUT_DEVICE GET_RAW | LAYER, NO, *VALUE (DATA32) | one raw value | |
//! | `0x99 0x1A` | INPUT_DEVICE CLR_CHANGES | LAYER, NO | clears change counters | |
//! | `0x99 0x1B` | INPUT_DEVICE READY_PCT | LAYER, NO, TYPE, MODE, VALUES, then VALUES × *DATA8 | percent values | |
//! | `0x99 0x1C` | INPUT_DEVICE READY_RAW | LAYER, NO, TYPE, MODE, VALUES, then VALUES × *DATA32 | raw integers | ✓ |
//! | `0x99 0x1D` | INPUT_DEVICE READY_SI | LAYER, NO, TYPE, MODE, VALUES, then VALUES × *DATAF | SI units (degrees for a motor) | ✓ |
//!
//! For the READY_* sub-commands TYPE 0 means "keep the type" and MODE −1 "keep the mode";
//! naming a type and mode switches the device if needed and waits until it delivers data
//! in that mode, which takes a while, so the colour sensor stays in RGB-RAW for a whole
//! scan.
//!
//! ## Brick queries
//!
//! UI_READ and COM_GET take a sub-code first, like INPUT_DEVICE. Their parameters, from the
//! firmware's parameter table (`lms2012.c`) and `c_ui.c` / `c_com.c`:
//!
//! | Sub-code | Parameters | Writes |
//! |----------|------------|--------|
//! | UI_READ GET_VBATT (1) | *VALUE | DATAF volts |
//! | UI_READ GET_LBATT (18) | *PCT | DATA8: `(mV − 6200) · 100 / (7500 − 6200)`, clamped to 0..100 |
//! | UI_READ GET_HW_VERS (9), GET_FW_VERS (10) | LENGTH, *DESTINATION | the text and its terminating zero, at most LENGTH bytes |
//! | COM_GET GET_BRICKNAME (13) | LENGTH, *DESTINATION | the same, the brick's name |
//!
//! A string output is a global variable with LENGTH bytes reserved for it
//! ([`DirectCommand::brick_name`] and the like reserve them); the firmware writes at most
//! LENGTH − 1 characters and a zero (`snprintf`), and leaves the rest of the slot as it was.
//! LENGTH −1 means "no check" and is never sent. The battery limits are the firmware's
//! (`lms2012.h`): the level runs from 6.2 V (0 %) to 7.5 V (100 %) for six AA cells; the
//! firmware itself warns below 6.2 V and switches off below 5.5 V within 10 s (the
//! rechargeable pack: 7.1, 6.5 and 6.0 V).
//!
//! ## Polarity
//!
//! OUTPUT_POLARITY sets a motor's direction convention: with POL −1 every later
//! OUTPUT_SPEED, OUTPUT_POWER and OUTPUT_STEP_/TIME_ job runs the motor the other way,
//! step counts included, while the tacho counts keep following the shaft (`d_pwm.c`
//! multiplies the speed and the steps by `Pol`, never the counts): a positive move of a
//! reversed motor makes its count *fall*. The firmware sets every motor's polarity back to
//! 1 only when a user program starts or ends (`d_pwm.c`: PROGRAM_STOP falls through to
//! PROGRAM_START), never when a host connects, so a host that finds a motor reversed by an
//! earlier session must set it: the MindCub3r sends OUTPUT_POLARITY 1 to its motors on
//! every connect.
//!
//! ## Motor counters
//!
//! A motor has two position counters (`c_output.c`); mixing them up loses the position.
//!
//! | Counter | Zeroed by | Read by |
//! |---------|-----------|---------|
//! | movement count | OUTPUT_RESET | OUTPUT_READ |
//! | sensor count | OUTPUT_CLR_COUNT | OUTPUT_GET_COUNT; INPUT_DEVICE READY_SI / READY_RAW / GET_RAW on input 16..19, type 7 or 8, mode 0 |
//!
//! The robot's absolute positions are sensor counts, zeroed only when homing.
//!
//! ## Execution on the brick
//!
//! * **One command at a time per connection** (`c_com.c`). While a command runs, a newly
//!   arrived no-reply command is ignored, and so is a newly arrived command that wants a
//!   reply, without any answer, except when the running command is itself a no-reply one:
//!   then the newcomer is answered at once with DIRECT_REPLY_ERROR. (A comment in
//!   `c_com.h` says a new command ends the running one instead; the code is what runs.)
//! * **The reply comes when the whole command has finished**, including any blocking
//!   operation in it (OUTPUT_READY, SOUND_READY, TIMER_READY, a READY_* that changes a
//!   sensor's mode).
//! * **DIRECT_REPLY_ERROR** means the command was not (completely) executed: it could not be
//!   loaded (header and size disagree) or the virtual machine failed. The global memory of
//!   such a reply means nothing. The simulated brick answers an unknown opcode or a
//!   malformed parameter this way, with the command's global size filled with zeros, and
//!   runs nothing after the fault.
//!
//! ## Programs on the brick
//!
//! A direct command is a program for the brick's virtual machine (`c_com.c` copies its
//! operations into an image and appends OBJECT_END), so besides motor and sensor opcodes it
//! may compute, compare and jump. [`Program`] builds such commands. The opcodes it uses
//! (`bytecodes.h`; `c_math.c`, `c_move.c`, `c_compare.c`, `c_branch.c`, `c_timer.c` for
//! their meaning):
//!
//! | Code | Name | Parameters | Effect |
//! |------|------|------------|--------|
//! | `0x10`/`0x11`/`0x12` | ADD8/16/32 | A, B, *DST | DST = A + B |
//! | `0x14`/`0x15`/`0x16` | SUB8/16/32 | A, B, *DST | DST = A − B |
//! | `0x18`/`0x19`/`0x1A` | MUL8/16/32 | A, B, *DST | DST = A · B |
//! | `0x30 + 4f + t` | MOVE*f*_*t* (f, t: 0 DATA8, 1 DATA16, 2 DATA32) | SRC, *DST | DST = SRC; narrowing saturates, and DATA*f*'s "not a number" (the lowest value) becomes DATA*t*'s |
//! | `0x40` | JR | OFFSET (DATA32) | jump |
//! | `0x41` / `0x42` | JR_FALSE / JR_TRUE | FLAG (DATA8), OFFSET | jump if FLAG is 0 / not 0 |
//! | `0x44 + 4r + w` | CP_*rel* (r: 0 LT, 1 GT, 2 EQ, 3 NEQ, 4 LTEQ, 5 GTEQ; w: 0 DATA8, 1 DATA16, 2 DATA32) | A, B, *FLAG (DATA8) | FLAG = (A rel B) |
//! | `0x64 + 4r + w` | JR_*rel* | A, B, OFFSET | jump if A rel B |
//! | `0x87` | TIMER_READ | *TIME (DATA32) | milliseconds since the program (the command) started |
//! | `0xC8`/`0xC9`/`0xCA` | READ8/16/32 | ARRAY, INDEX (DATA8), *DST | DST = `ARRAY[INDEX]`, ARRAY a variable, INDEX in elements |
//! | `0xCC`/`0xCD`/`0xCE` | WRITE8/16/32 | SRC, INDEX (DATA8), ARRAY | `ARRAY[INDEX]` = SRC |
//!
//! The code one above each DATA32 member (`0x13`, `0x3B`, `0x47`, …) is its DATAF member,
//! not used here. The firmware's rules that a program relies on:
//!
//! * **Widths.** The virtual machine decodes every parameter to a pointer
//!   (`lms2012.c`, `PrimParPointer`): a constant is first widened to 32 bits, a variable is
//!   its address; the opcode then reads (or writes) its own width there. So a constant
//!   fits any width it is in range of, and a variable must be as wide as the opcode says
//!   (a DATA32 opcode on a DATA8 variable reads three bytes past it). Arithmetic wraps.
//! * **Jumps.** OFFSET counts from the first byte after the jump instruction (the virtual
//!   machine adds it to its instruction pointer once all parameters are read); a negative
//!   OFFSET jumps back. Jumping to the end of the operations ends the program. [`Program`]
//!   writes every OFFSET as LC2 (`82 lo hi`) so it can be patched once the target is known.
//! * **Indices are not checked** by READ/WRITE: the host must keep them inside the array.
//! * **Alignment.** DATA16 and DATA32 variables sit at offsets divisible by 2 and 4.
//! * **Memory.** Global memory comes back in the reply, so at most [`MAX_GLOBALS`] = 1019
//!   bytes (1024 minus length, counter and status; `c_com.c` loads a command asking for up
//!   to 1021, `MAX_COMMAND_GLOBALS`, but no reply carries that); local memory is scratch,
//!   at most [`MAX_LOCALS`] = 63 bytes (six bits of the header); the whole command at most
//!   [`MAX_MESSAGE`] bytes.
//! * **Time.** The virtual machine runs a program up to 2000 instructions or 2 ms
//!   (`PRG_PRIORITY`, the preemption timer) before it serves the communication module and
//!   the other program slots, then carries on; a loop runs as long as it loops. The reply
//!   goes out when the program ends, and until then the brick answers no other command on
//!   that connection (see above): not even OUTPUT_STOP. OUTPUT_READY waits without a time
//!   limit, so a program here never uses it: it polls OUTPUT_TEST and TIMER_READ in a loop
//!   with a deadline and stops the motors itself when the deadline passes.
//!
//! P1: count down from 5 in a local (4 local bytes: header `00 10`): `LV0 = 5`
//! (`3A 05 40`), `LV0 = LV0 − 1` (`16 40 01 40`), back by 10 bytes while `LV0 > 0`
//! (`6A 40 00 82 F6 FF`).
//! ```text
//! → 12 00 | 10 00 | 00 | 00 10 | 3A 05 40 | 16 40 01 40 | 6A 40 00 82 F6 FF
//! ← 03 00 | 10 00 | 02
//! ```
//!
//! ## Worked examples
//!
//! `→` host to brick, `←` brick to host; `|` only separates fields. Counters are arbitrary.
//! E1 is byte for byte a logged exchange of the `ev3_dc` documentation; E2, E5, E7 and E12
//! have the layout of logged requests there (some for another port), and the values in the
//! replies of E6 and E7 are readings printed there. The others follow from the tables
//! above.
//!
//! E1: ping, reply wanted.
//! ```text
//! → 06 00 | 2A 00 | 00 | 00 00 | 01
//! ← 03 00 | 2A 00 | 02
//! ```
//! E2: LED red flashing (pattern 5), no reply.
//! ```text
//! → 08 00 | 2B 00 | 80 | 00 00 | 82 1B 05
//! ```
//! E3: motor B +270° at 40 %, profile 30° / 210° / 30°, brake, answered when done
//! (`81 28` = 40, `1E` = 30, `82 D2 00` = 210; then OUTPUT_READY on B).
//! ```text
//! → 13 00 | 01 00 | 00 | 00 00 | AE 00 02 81 28 1E 82 D2 00 1E 01 | AA 00 02
//! ← 03 00 | 01 00 | 02
//! ```
//! E4: the same move backwards (SPEED `81 D8` = −40), started and not waited for, no reply.
//! ```text
//! → 13 00 | 02 00 | 80 | 00 00 | AE 00 02 81 D8 1E 82 D2 00 1E 01 | A6 00 02
//! ```
//! E5: busy flag of motors A and B (NOS `03`), one global byte; `01` busy, `00` idle.
//! ```text
//! → 09 00 | 04 00 | 00 | 01 00 | A9 00 03 60
//! ← 04 00 | 04 00 | 02 | 01
//! ```
//! E6: colour sensor on port 2 (input 1), type 29 (`1D`), mode 4, three values at GV 0, 4,
//! 8; twelve global bytes. The reply is R 253, G 292, B 183, a white sticker.
//! ```text
//! → 0F 00 | 03 00 | 00 | 0C 00 | 99 1C 00 01 1D 04 03 60 64 68
//! ← 0F 00 | 03 00 | 02 | FD 00 00 00  24 01 00 00  B7 00 00 00
//! ```
//! E7: motor A read as input 16 (`10`), type 7, mode 0, as a float: −33.0°.
//! ```text
//! → 0D 00 | 06 00 | 00 | 04 00 | 99 1D 00 10 07 00 01 60
//! ← 07 00 | 06 00 | 02 | 00 00 04 C2
//! ```
//! E8: sensor count of motor C (NO = 2) as an integer: 270.
//! ```text
//! → 09 00 | 05 00 | 00 | 04 00 | B3 00 02 60
//! ← 07 00 | 05 00 | 02 | 0E 01 00 00
//! ```
//! E9: stop all motors, coasting, no reply.
//! ```text
//! → 09 00 | 07 00 | 80 | 00 00 | A3 00 0F 00
//! ```
//! E10: reset motor B and zero its sensor count (the end of homing).
//! ```text
//! → 0B 00 | 08 00 | 00 | 00 00 | A2 00 02 | B2 00 02
//! ← 03 00 | 08 00 | 02
//! ```
//! E11: motor C by time: 50 %, 100 ms up, 500 ms steady, 100 ms down, coast, start, no reply.
//! ```text
//! → 15 00 | 09 00 | 80 | 00 00 | AF 00 04 81 32 81 64 82 F4 01 81 64 00 | A6 00 04
//! ```
//! E12: infrared proximity on sensor port 1 (type 33 needs LC1, `81 21`): 26.0.
//! ```text
//! → 0E 00 | 0B 00 | 00 | 04 00 | 99 1D 00 00 81 21 00 01 60
//! ← 07 00 | 0B 00 | 02 | 00 00 D0 41
//! ```
//! E13: one round trip for the positions of A, B (large) and C (medium) as floats and the
//! busy flag of all three (13 global bytes).
//! ```text
//! → 21 00 | 0C 00 | 00 | 0D 00 | 99 1D 00 10 07 00 01 60 | 99 1D 00 11 07 00 01 64
//!                                | 99 1D 00 12 08 00 01 68 | A9 00 07 6C
//! ← 10 00 | 0C 00 | 02 | <f32 A> <f32 B> <f32 C> <i8 busy>
//! ```
//! E14: OUTPUT_READ of motor B (NO = 1): speed at GV 0, movement count at GV 4.
//! ```text
//! → 0A 00 | 0D 00 | 00 | 08 00 | A8 00 01 60 64
//! ← 0B 00 | 0D 00 | 02 | <i8 speed> 00 00 00 <i32 count>
//! ```
//! E15: an error reply (for example to an unknown opcode).
//! ```text
//! ← 03 00 | cc cc | 04
//! ```
//! E16: the brick's name (32 bytes at GV 0; LENGTH 32 is `81 20`), firmware version (16
//! bytes at GV 32, `E1 20`), battery volts (DATAF at GV 48) and level (DATA8 at GV 52): 53
//! global bytes (`35 00`). The reply: `EV3`, `V1.09H`, 7.9 V (`CD CC FC 40`), 100 %.
//! ```text
//! → 17 00 | 0E 00 | 00 | 35 00 | D3 0D 81 20 60 | 81 0A 10 E1 20 | 81 01 E1 30 | 81 12 E1 34
//! ← 38 00 | 0E 00 | 02 | 45 56 33 00 <28 bytes> | 56 31 2E 30 39 48 00 <9 bytes> | CD CC FC 40 | 64
//! ```
//! E17: polarity of motors A, B and C (`07`) set to normal, no reply.
//! ```text
//! → 09 00 | 0F 00 | 80 | 00 00 | A7 00 07 01
//! ```

use std::fmt;

pub mod audit;
pub mod ops;

/// Message type: direct command, reply wanted.
pub const DIRECT_COMMAND_REPLY: u8 = 0x00;
/// Message type: direct command, no reply.
pub const DIRECT_COMMAND_NO_REPLY: u8 = 0x80;
/// Reply status: ok.
pub const DIRECT_REPLY: u8 = 0x02;
/// Reply status: the command was not (fully) executed.
pub const DIRECT_REPLY_ERROR: u8 = 0x04;
/// System command types (recognised only).
pub const SYSTEM_COMMAND_REPLY: u8 = 0x01;
pub const SYSTEM_COMMAND_NO_REPLY: u8 = 0x81;
pub const SYSTEM_REPLY_ERROR: u8 = 0x05;
/// Largest message on the wire, length field included.
pub const MAX_MESSAGE: usize = 1024;

/// Opcode numbers (see [Opcodes](crate::robot::ev3::protocol#opcodes)).
pub mod op {
    pub const NOP: u8 = 0x01;
    pub const UI_READ: u8 = 0x81;
    pub const UI_READ_GET_VBATT: u8 = 0x01;
    pub const UI_READ_GET_HW_VERS: u8 = 0x09;
    pub const UI_READ_GET_FW_VERS: u8 = 0x0A;
    pub const UI_READ_GET_LBATT: u8 = 0x12;
    pub const UI_WRITE: u8 = 0x82;
    pub const UI_WRITE_LED: u8 = 0x1B;
    pub const COM_GET: u8 = 0xD3;
    pub const COM_GET_BRICKNAME: u8 = 0x0D;
    pub const TIMER_WAIT: u8 = 0x85;
    pub const TIMER_READY: u8 = 0x86;
    pub const SOUND: u8 = 0x94;
    pub const SOUND_BREAK: u8 = 0x00;
    pub const SOUND_TONE: u8 = 0x01;
    pub const SOUND_READY: u8 = 0x96;
    pub const INPUT_DEVICE: u8 = 0x99;
    pub const INPUT_GET_TYPEMODE: u8 = 0x05;
    pub const INPUT_GET_RAW: u8 = 0x0B;
    pub const INPUT_CLR_CHANGES: u8 = 0x1A;
    pub const INPUT_READY_PCT: u8 = 0x1B;
    pub const INPUT_READY_RAW: u8 = 0x1C;
    pub const INPUT_READY_SI: u8 = 0x1D;
    pub const OUTPUT_RESET: u8 = 0xA2;
    pub const OUTPUT_STOP: u8 = 0xA3;
    pub const OUTPUT_POWER: u8 = 0xA4;
    pub const OUTPUT_SPEED: u8 = 0xA5;
    pub const OUTPUT_START: u8 = 0xA6;
    pub const OUTPUT_POLARITY: u8 = 0xA7;
    pub const OUTPUT_READ: u8 = 0xA8;
    pub const OUTPUT_TEST: u8 = 0xA9;
    pub const OUTPUT_READY: u8 = 0xAA;
    pub const OUTPUT_STEP_POWER: u8 = 0xAC;
    pub const OUTPUT_TIME_POWER: u8 = 0xAD;
    pub const OUTPUT_STEP_SPEED: u8 = 0xAE;
    pub const OUTPUT_TIME_SPEED: u8 = 0xAF;
    pub const OUTPUT_CLR_COUNT: u8 = 0xB2;
    pub const OUTPUT_GET_COUNT: u8 = 0xB3;
    pub use super::program::op::*;
}

/// Device type numbers reported by GET_TYPEMODE (see [Device types](crate::robot::ev3::protocol#device-types)).
pub mod device {
    pub const LARGE_MOTOR: i8 = 7;
    pub const MEDIUM_MOTOR: i8 = 8;
    pub const TOUCH: i8 = 16;
    pub const COLOR: i8 = 29;
    pub const ULTRASONIC: i8 = 30;
    pub const INFRARED: i8 = 33;
    pub const NONE: i8 = 126;
    /// Colour sensor mode RGB-RAW (3 values).
    pub const COLOR_RGB_RAW: i8 = 4;
    /// The largest value of an RGB-RAW channel.
    pub const RGB_RAW_MAX: f64 = 1023.0;

    /// Whether the colour sensor can give `rgb` in mode RGB-RAW: a value outside 0..1023
    /// is a reply garbled on the way.
    pub fn rgb_raw_possible(rgb: &[f64; 3]) -> bool {
        rgb.iter().all(|v| (0.0..=RGB_RAW_MAX).contains(v))
    }

    /// A human name for a device type number.
    pub fn name(t: i8) -> String {
        match t {
            LARGE_MOTOR => "large motor".into(),
            MEDIUM_MOTOR => "medium motor".into(),
            TOUCH => "touch sensor".into(),
            COLOR => "colour sensor".into(),
            ULTRASONIC => "ultrasonic sensor".into(),
            INFRARED => "infrared sensor".into(),
            NONE => "nothing".into(),
            other => format!("device type {other}"),
        }
    }
}

/// What went wrong decoding bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("message too short: {len} bytes, need at least {need}")]
    Short { len: usize, need: usize },
    #[error("length field says {field} bytes follow but the frame has {actual}")]
    Length { field: usize, actual: usize },
    #[error("unknown message type 0x{0:02X}")]
    Type(u8),
    #[error("parameter at byte {at}: {what}")]
    Param { at: usize, what: String },
    #[error("unknown opcode 0x{code:02X} at byte {at}")]
    Opcode { code: u8, at: usize },
    #[error("global memory has {have} bytes, reading {need} at offset {offset}")]
    Global {
        have: usize,
        need: usize,
        offset: usize,
    },
    #[error("{0}")]
    Other(String),
}

/// An EV3 motor port (output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OutputPort {
    A,
    B,
    C,
    D,
}

impl OutputPort {
    pub const ALL: [OutputPort; 4] = [OutputPort::A, OutputPort::B, OutputPort::C, OutputPort::D];

    /// Port number (NO) for OUTPUT_READ / OUTPUT_GET_COUNT: A = 0 .. D = 3.
    pub fn no(self) -> u8 {
        self as u8
    }

    /// Bit in the NOS field: A = 1, B = 2, C = 4, D = 8.
    pub fn bit(self) -> u8 {
        1 << self.no()
    }

    /// The motor read as an input device (ports 16..19).
    pub fn as_input(self) -> u8 {
        16 + self.no()
    }

    pub fn letter(self) -> char {
        (b'A' + self.no()) as char
    }

    pub fn from_letter(c: char) -> Option<OutputPort> {
        match c.to_ascii_uppercase() {
            'A' => Some(OutputPort::A),
            'B' => Some(OutputPort::B),
            'C' => Some(OutputPort::C),
            'D' => Some(OutputPort::D),
            _ => None,
        }
    }

    /// NOS of several ports.
    pub fn nos(ports: &[OutputPort]) -> u8 {
        ports.iter().fold(0, |acc, p| acc | p.bit())
    }
}

impl fmt::Display for OutputPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A decoded parameter (see [Parameter encoding](crate::robot::ev3::protocol#parameter-encoding)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    Const(i32),
    Str(String),
    Local(usize),
    Global(usize),
}

/// Appends the shortest constant form of `v` (LC0, LC1, LC2 or LC4).
pub fn push_const(buf: &mut Vec<u8>, v: i32) {
    if (-32..=31).contains(&v) {
        buf.push((v as u8) & 0x3F);
    } else if (-127..=127).contains(&v) {
        buf.push(0x81);
        buf.push(v as i8 as u8);
    } else if (-32767..=32767).contains(&v) {
        buf.push(0x82);
        buf.extend_from_slice(&(v as i16).to_le_bytes());
    } else {
        buf.push(0x83);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a global-variable reference (GV0 when it fits, else GV1/GV2).
pub fn push_global(buf: &mut Vec<u8>, offset: usize) {
    if offset < 32 {
        buf.push(0x60 | offset as u8);
    } else if offset < 256 {
        buf.push(0xE1);
        buf.push(offset as u8);
    } else {
        buf.push(0xE2);
        buf.extend_from_slice(&(offset as u16).to_le_bytes());
    }
}

/// Decodes one parameter at `*pos`, advancing it. Accepts every form of [Parameter encoding](crate::robot::ev3::protocol#parameter-encoding), not only the shortest.
pub fn decode_param(bytes: &[u8], pos: &mut usize) -> Result<Param, ProtocolError> {
    let at = *pos;
    let err = |what: &str| ProtocolError::Param {
        at,
        what: what.to_string(),
    };
    let first = *bytes.get(at).ok_or_else(|| err("missing"))?;
    *pos += 1;
    if first & 0x80 == 0 {
        let value = (first & 0x1F) as usize;
        return Ok(match first & 0x60 {
            0x40 => Param::Local(value),
            0x60 => Param::Global(value),
            _ => {
                let mut v = (first & 0x3F) as i32;
                if first & 0x20 != 0 {
                    v |= !0x3F;
                }
                Param::Const(v)
            }
        });
    }
    let variable = first & 0x40 != 0;
    let global = first & 0x20 != 0;
    if first & 0x18 != 0 {
        return Err(err("address/handle forms are not supported"));
    }
    let size = first & 0x07;
    if !variable && (size == 4 || size == 0) {
        let rest = &bytes[*pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| err("unterminated string"))?;
        let s = String::from_utf8_lossy(&rest[..end]).into_owned();
        *pos += end + 1;
        return Ok(Param::Str(s));
    }
    let n = match size {
        1 => 1,
        2 => 2,
        3 => 4,
        _ => return Err(err(&format!("bad size code {size}"))),
    };
    let data = bytes
        .get(*pos..*pos + n)
        .ok_or_else(|| err("truncated value"))?;
    *pos += n;
    let value = match n {
        1 => data[0] as i8 as i32,
        2 => i16::from_le_bytes([data[0], data[1]]) as i32,
        _ => i32::from_le_bytes([data[0], data[1], data[2], data[3]]),
    };
    Ok(if !variable {
        Param::Const(value)
    } else {
        // Variable offsets are unsigned.
        let off = match n {
            1 => data[0] as usize,
            2 => u16::from_le_bytes([data[0], data[1]]) as usize,
            _ => u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize,
        };
        if global {
            Param::Global(off)
        } else {
            Param::Local(off)
        }
    })
}

/// Where one value lands in the reply's global memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub offset: usize,
    pub kind: SlotKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    I8,
    I16,
    I32,
    F32,
    /// A string of at most this many bytes, its terminating zero included.
    Str(u8),
}

impl SlotKind {
    /// The slot of an output of `kind` ([`ops::Kind`]); a string gets `len` bytes.
    fn of(kind: ops::Kind, len: i32) -> SlotKind {
        match kind {
            ops::Kind::D8 => SlotKind::I8,
            ops::Kind::D16 => SlotKind::I16,
            ops::Kind::D32 => SlotKind::I32,
            ops::Kind::F => SlotKind::F32,
            ops::Kind::Str => SlotKind::Str(len.clamp(1, 127) as u8),
        }
    }

    fn size(self) -> usize {
        match self {
            SlotKind::I8 => 1,
            SlotKind::I16 => 2,
            SlotKind::I32 | SlotKind::F32 => 4,
            SlotKind::Str(n) => n as usize,
        }
    }

    /// The offsets a slot of this kind may start at are multiples of this.
    fn align(self) -> usize {
        match self {
            SlotKind::I16 => 2,
            SlotKind::I32 | SlotKind::F32 => 4,
            SlotKind::I8 | SlotKind::Str(_) => 1,
        }
    }
}

/// A direct command being built: operations plus the global memory they write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectCommand {
    pub ops: Vec<u8>,
    pub global: usize,
    pub local: usize,
    pub reply: bool,
}

impl Default for DirectCommand {
    fn default() -> Self {
        DirectCommand::new()
    }
}

impl DirectCommand {
    /// A command that asks for a reply.
    pub fn new() -> DirectCommand {
        DirectCommand {
            ops: Vec::new(),
            global: 0,
            local: 0,
            reply: true,
        }
    }

    /// A fire-and-forget command.
    pub fn no_reply() -> DirectCommand {
        DirectCommand {
            reply: false,
            ..DirectCommand::new()
        }
    }

    /// Allocates a global slot in the order of the operations, rounding a 4-byte slot up to an
    /// offset divisible by 4 (see [Global memory](crate::robot::ev3::protocol#global-memory)).
    fn alloc(&mut self, kind: SlotKind) -> Slot {
        let align = kind.align();
        let offset = self.global.div_ceil(align) * align;
        self.global = offset + kind.size();
        Slot { offset, kind }
    }

    fn c(&mut self, v: i32) -> &mut Self {
        push_const(&mut self.ops, v);
        self
    }

    fn g(&mut self, kind: SlotKind) -> Slot {
        let s = self.alloc(kind);
        push_global(&mut self.ops, s.offset);
        s
    }

    /// Appends the operation `code` (with `sub`, for one that takes a sub-code) of the
    /// [table of operations](ops): its inputs `ins` in the table's order, each in its
    /// shortest constant form, and a global slot for each output the table lists, in
    /// order (a string output as long as the LENGTH input before it; READY_*'s VALUES
    /// outputs after the parameters). Returns the slots.
    fn call(&mut self, code: u8, sub: Option<u8>, ins: &[i32]) -> Vec<Slot> {
        let Some(op) = ops::find(code, sub) else {
            unreachable!("the builders call operations of the table, not 0x{code:02X}")
        };
        self.ops.push(code);
        if let Some(s) = sub {
            self.c(s as i32);
        }
        let mut ins = ins.iter().copied();
        let mut slots = Vec::new();
        // The last input: a string output's LENGTH, READY_*'s VALUES.
        let mut last = 0;
        for par in op.params {
            if par.out {
                slots.push(self.g(SlotKind::of(par.kind, last)));
            } else {
                last = ins.next().unwrap_or(0);
                self.c(last);
            }
        }
        if let Some(kind) = op.values {
            for _ in 0..last {
                slots.push(self.g(SlotKind::of(kind, 0)));
            }
        }
        debug_assert!(ins.next().is_none(), "{}: too many inputs", op.name);
        slots
    }

    pub fn nop(&mut self) -> &mut Self {
        self.call(op::NOP, None, &[]);
        self
    }

    /// LED pattern 0..9 (0 off, 1 green, 2 red, 3 orange, +3 flash, +6 pulse).
    pub fn led(&mut self, pattern: u8) -> &mut Self {
        self.call(op::UI_WRITE, Some(op::UI_WRITE_LED), &[pattern as i32]);
        self
    }

    /// UI_READ GET_VBATT: battery voltage (DATAF).
    pub fn battery_volts(&mut self) -> Slot {
        self.call(op::UI_READ, Some(op::UI_READ_GET_VBATT), &[])[0]
    }

    /// UI_READ GET_LBATT: battery level 0..100 (DATA8).
    pub fn battery_level(&mut self) -> Slot {
        self.call(op::UI_READ, Some(op::UI_READ_GET_LBATT), &[])[0]
    }

    /// A string query (UI_READ or COM_GET with `sub`): LENGTH `len` (1..127), then a string
    /// slot of `len` bytes.
    fn text(&mut self, code: u8, sub: u8, len: u8) -> Slot {
        let len = len.clamp(1, 127);
        self.call(code, Some(sub), &[len as i32])[0]
    }

    /// UI_READ GET_FW_VERS: the firmware version, at most `len` bytes with its zero.
    pub fn firmware_version(&mut self, len: u8) -> Slot {
        self.text(op::UI_READ, op::UI_READ_GET_FW_VERS, len)
    }

    /// UI_READ GET_HW_VERS: the hardware version, at most `len` bytes with its zero.
    pub fn hardware_version(&mut self, len: u8) -> Slot {
        self.text(op::UI_READ, op::UI_READ_GET_HW_VERS, len)
    }

    /// COM_GET GET_BRICKNAME: the brick's name, at most `len` bytes with its zero.
    pub fn brick_name(&mut self, len: u8) -> Slot {
        self.text(op::COM_GET, op::COM_GET_BRICKNAME, len)
    }

    /// OUTPUT_POLARITY: −1 reversed, 0 toggle, 1 normal (see [Polarity](crate::robot::ev3::protocol#polarity)).
    pub fn output_polarity(&mut self, nos: u8, pol: i8) -> &mut Self {
        self.out(op::OUTPUT_POLARITY, &[nos as i32, pol as i32]);
        self
    }

    pub fn tone(&mut self, volume: u8, freq_hz: u16, ms: u16) -> &mut Self {
        let ins = [volume as i32, freq_hz as i32, ms as i32];
        self.call(op::SOUND, Some(op::SOUND_TONE), &ins);
        self
    }

    /// An OUTPUT_* operation on LAYER 0: its inputs after LAYER, its output slots.
    fn out(&mut self, code: u8, ins: &[i32]) -> Vec<Slot> {
        let mut all = vec![0];
        all.extend_from_slice(ins);
        self.call(code, None, &all)
    }

    pub fn output_reset(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_RESET, &[nos as i32]);
        self
    }

    pub fn output_stop(&mut self, nos: u8, brake: bool) -> &mut Self {
        self.out(op::OUTPUT_STOP, &[nos as i32, brake as i32]);
        self
    }

    pub fn output_power(&mut self, nos: u8, power: i8) -> &mut Self {
        self.out(op::OUTPUT_POWER, &[nos as i32, power as i32]);
        self
    }

    pub fn output_speed(&mut self, nos: u8, speed: i8) -> &mut Self {
        self.out(op::OUTPUT_SPEED, &[nos as i32, speed as i32]);
        self
    }

    pub fn output_start(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_START, &[nos as i32]);
        self
    }

    pub fn output_ready(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_READY, &[nos as i32]);
        self
    }

    pub fn output_clr_count(&mut self, nos: u8) -> &mut Self {
        self.out(op::OUTPUT_CLR_COUNT, &[nos as i32]);
        self
    }

    /// OUTPUT_TEST: busy flag (DATA8) of the selected motors.
    pub fn output_test(&mut self, nos: u8) -> Slot {
        self.out(op::OUTPUT_TEST, &[nos as i32])[0]
    }

    /// OUTPUT_READ: (speed DATA8, movement count DATA32) of one motor. The speed byte goes
    /// first on the wire; the count's slot is aligned after it.
    pub fn output_read(&mut self, port: OutputPort) -> (Slot, Slot) {
        let s = self.out(op::OUTPUT_READ, &[port.no() as i32]);
        (s[0], s[1])
    }

    /// OUTPUT_GET_COUNT: sensor tacho count (DATA32) of one motor.
    pub fn output_get_count(&mut self, port: OutputPort) -> Slot {
        self.out(op::OUTPUT_GET_COUNT, &[port.no() as i32])[0]
    }

    fn profile(&mut self, code: u8, nos: u8, speed: i8, p: [u32; 3], brake: bool) -> &mut Self {
        let [p1, p2, p3] = p.map(|v| v.min(i32::MAX as u32) as i32);
        let ins = [nos as i32, speed as i32, p1, p2, p3, brake as i32];
        self.out(code, &ins);
        self
    }

    /// OUTPUT_STEP_SPEED: ramp-up, constant, ramp-down degrees; direction = sign of speed.
    pub fn step_speed(&mut self, nos: u8, speed: i8, steps: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_STEP_SPEED, nos, speed, steps, brake)
    }

    pub fn step_power(&mut self, nos: u8, power: i8, steps: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_STEP_POWER, nos, power, steps, brake)
    }

    /// OUTPUT_TIME_SPEED: ramp-up, constant, ramp-down milliseconds.
    pub fn time_speed(&mut self, nos: u8, speed: i8, ms: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_TIME_SPEED, nos, speed, ms, brake)
    }

    pub fn time_power(&mut self, nos: u8, power: i8, ms: [u32; 3], brake: bool) -> &mut Self {
        self.profile(op::OUTPUT_TIME_POWER, nos, power, ms, brake)
    }

    /// INPUT_DEVICE GET_TYPEMODE: (type, mode), both DATA8.
    pub fn get_typemode(&mut self, input: u8) -> (Slot, Slot) {
        let s = self.call(
            op::INPUT_DEVICE,
            Some(op::INPUT_GET_TYPEMODE),
            &[0, input as i32],
        );
        (s[0], s[1])
    }

    fn ready(&mut self, sub: u8, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        let ins = [0, input as i32, typ as i32, mode as i32, n as i32];
        self.call(op::INPUT_DEVICE, Some(sub), &ins)
    }

    /// INPUT_DEVICE READY_RAW: `n` DATA32 values.
    pub fn ready_raw(&mut self, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        self.ready(op::INPUT_READY_RAW, input, typ, mode, n)
    }

    /// INPUT_DEVICE READY_SI: `n` DATAF values.
    pub fn ready_si(&mut self, input: u8, typ: i8, mode: i8, n: u8) -> Vec<Slot> {
        self.ready(op::INPUT_READY_SI, input, typ, mode, n)
    }

    /// The whole message with `counter`.
    pub fn encode(&self, counter: u16) -> Vec<u8> {
        let len = 5 + self.ops.len();
        let mut out = Vec::with_capacity(len + 2);
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(&counter.to_le_bytes());
        out.push(if self.reply {
            DIRECT_COMMAND_REPLY
        } else {
            DIRECT_COMMAND_NO_REPLY
        });
        let mem = ((self.local as u16) << 10) | (self.global as u16 & 0x3FF);
        out.extend_from_slice(&mem.to_le_bytes());
        out.extend_from_slice(&self.ops);
        out
    }
}

/// A decoded reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub counter: u16,
    pub ok: bool,
    pub globals: Vec<u8>,
}

impl Reply {
    fn bytes(&self, slot: Slot) -> Result<&[u8], ProtocolError> {
        let n = slot.kind.size();
        self.globals
            .get(slot.offset..slot.offset + n)
            .ok_or(ProtocolError::Global {
                have: self.globals.len(),
                need: n,
                offset: slot.offset,
            })
    }

    pub fn i8(&self, slot: Slot) -> Result<i8, ProtocolError> {
        Ok(self.bytes(slot)?[0] as i8)
    }

    pub fn i32(&self, slot: Slot) -> Result<i32, ProtocolError> {
        let b = self.bytes(slot)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn f32(&self, slot: Slot) -> Result<f32, ProtocolError> {
        let b = self.bytes(slot)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A string slot's text, up to its terminating zero (one is required within the slot).
    pub fn string(&self, slot: Slot) -> Result<String, ProtocolError> {
        let b = self.bytes(slot)?;
        let end = b.iter().position(|&c| c == 0).ok_or_else(|| {
            ProtocolError::Other(format!(
                "the string at global {} does not end within its {} bytes",
                slot.offset,
                b.len()
            ))
        })?;
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }
}

/// The header every frame (command or reply) starts with: checks the length field against
/// the frame and returns the message counter and the type byte.
fn frame_header(frame: &[u8]) -> Result<(u16, u8), ProtocolError> {
    if frame.len() < 5 {
        return Err(ProtocolError::Short {
            len: frame.len(),
            need: 5,
        });
    }
    let field = u16::from_le_bytes([frame[0], frame[1]]) as usize;
    if field != frame.len() - 2 {
        return Err(ProtocolError::Length {
            field,
            actual: frame.len() - 2,
        });
    }
    let counter = u16::from_le_bytes([frame[2], frame[3]]);
    Ok((counter, frame[4]))
}

/// Decodes one framed reply (length field included).
pub fn decode_reply(frame: &[u8]) -> Result<Reply, ProtocolError> {
    let (counter, kind) = frame_header(frame)?;
    let ok = match kind {
        DIRECT_REPLY => true,
        DIRECT_REPLY_ERROR => false,
        other => return Err(ProtocolError::Type(other)),
    };
    Ok(Reply {
        counter,
        ok,
        globals: frame[5..].to_vec(),
    })
}

/// Encodes a reply (simulator side).
pub fn encode_reply(counter: u16, ok: bool, globals: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + globals.len());
    out.extend_from_slice(&((3 + globals.len()) as u16).to_le_bytes());
    out.extend_from_slice(&counter.to_le_bytes());
    out.push(if ok { DIRECT_REPLY } else { DIRECT_REPLY_ERROR });
    out.extend_from_slice(globals);
    out
}

/// A decoded command frame (simulator side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFrame {
    pub counter: u16,
    pub kind: u8,
    pub global: usize,
    pub local: usize,
    /// Operations (direct) or the system command bytes (system).
    pub body: Vec<u8>,
}

impl CommandFrame {
    pub fn wants_reply(&self) -> bool {
        self.kind == DIRECT_COMMAND_REPLY || self.kind == SYSTEM_COMMAND_REPLY
    }

    pub fn is_system(&self) -> bool {
        self.kind == SYSTEM_COMMAND_REPLY || self.kind == SYSTEM_COMMAND_NO_REPLY
    }
}

/// Decodes one framed command (length field included).
pub fn decode_command(frame: &[u8]) -> Result<CommandFrame, ProtocolError> {
    let (counter, kind) = frame_header(frame)?;
    match kind {
        DIRECT_COMMAND_REPLY | DIRECT_COMMAND_NO_REPLY => {
            if frame.len() < 7 {
                return Err(ProtocolError::Short {
                    len: frame.len(),
                    need: 7,
                });
            }
            let mem = u16::from_le_bytes([frame[5], frame[6]]);
            Ok(CommandFrame {
                counter,
                kind,
                global: (mem & 0x3FF) as usize,
                local: (mem >> 10) as usize,
                body: frame[7..].to_vec(),
            })
        }
        SYSTEM_COMMAND_REPLY | SYSTEM_COMMAND_NO_REPLY => Ok(CommandFrame {
            counter,
            kind,
            global: 0,
            local: 0,
            body: frame[5..].to_vec(),
        }),
        other => Err(ProtocolError::Type(other)),
    }
}

/// Splits a byte stream into frames (length-prefixed), tolerating split and merged reads.
#[derive(Debug, Default)]
pub struct FrameBuffer {
    buf: Vec<u8>,
}

impl FrameBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, if any.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        if self.buf.len() < 2 {
            return None;
        }
        let len = u16::from_le_bytes([self.buf[0], self.buf[1]]) as usize;
        if self.buf.len() < len + 2 {
            return None;
        }
        let frame: Vec<u8> = self.buf.drain(..len + 2).collect();
        Some(frame)
    }

    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

/// Hex dump, for messages and logs.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Bytes of a hex dump written as in the module's worked examples (`"0D 00 | 2A 00"`; `|` separators are
/// ignored), for tests here and in the simulator.
#[cfg(test)]
pub(crate) fn from_hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .filter(|t| *t != "|")
        .map(|t| u8::from_str_radix(t, 16).expect("a hex byte"))
        .collect()
}

mod program;
pub use program::{
    Cmp, Label, Operand, Program, ProgramError, Var, Width, MAX_GLOBALS, MAX_LOCALS,
};

#[cfg(test)]
mod tests;
