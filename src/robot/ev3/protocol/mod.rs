//! EV3 direct commands: the pure codec. Encodes commands and decodes replies for the
//! driver, and decodes commands and encodes replies for the simulated brick. No I/O.
//!
//! Level: robot (depends on nothing else in the crate).
//!
//! The sections below and those of the submodules are the parts of the protocol this code
//! relies on. The byte dumps under [Worked examples](#worked-examples) are the golden tests
//! of this module (its `tests.rs`) and of the simulated brick.
//!
//! | Module | What it holds |
//! |--------|---------------|
//! | [`frame`] | framing and message types; a command frame's decoder, the frame splitter |
//! | [`params`] | parameter encoding: the shortest constant forms, the decoder of every form |
//! | [`ops`] | the table of operations (each opcode's parameters), its walk, the firmware's validator |
//! | [`command`] | [`DirectCommand`]'s builders and the global memory they hand out |
//! | [`reply`] | a reply's decoder and encoder, and the values it carries |
//! | `program` | [`Program`]: commands that compute, compare and jump |
//! | [`audit`] | the wire audit |
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
//! * **One command at a time, the next one queued** (`c_com.c`). Loading a direct command
//!   clears the flag that lets the communication module read the links (`VmReady`,
//!   `c_com.c:435`); while it is clear no channel is read at all (`c_com.c:2478`), and it
//!   is set again only when the running command's reply goes out (COM_WRITE REPLY,
//!   `c_com.c:3488`, which the UI program sends when the command slot stops, for a
//!   no-reply command too). A command sent meanwhile is therefore not dropped: it waits
//!   unread in the link's buffer and runs after the running one has ended and answered,
//!   in the order sent, so an OUTPUT_STOP sent during a long command stops nothing until
//!   that command ends. (The code that answers a newcomer with DIRECT_REPLY_ERROR while a
//!   no-reply command runs, `c_com.c:2617-2636`, and the comment in `c_com.h` that says a
//!   new command ends the running one, describe nothing that happens while a command runs:
//!   nothing is read then.)
//! * **The reply comes when the whole command has finished**, including any blocking
//!   operation in it (OUTPUT_READY, SOUND_READY, TIMER_READY, a READY_* that changes a
//!   sensor's mode).
//! * **The whole command is checked before any of it runs.** The loader refuses a header
//!   asking for more than 1021 global or 64 local bytes (`c_com.c:456`) with an immediate
//!   DIRECT_REPLY_ERROR; as its code reads, the brick then reads no further command, since
//!   only a reply of a command that ran sets the flag above again (`c_com.c:2604-2616`,
//!   `:2652-2658`). Then the firmware's validator (`lms2012.c:1416`) refuses an unknown
//!   opcode, a constant first parameter outside its kind's range (DATA8 −127..127, DATA16
//!   −32767..32767, DATA32 ±(2^31 − 1)) and a DATA16/DATA32/DATAF variable at an offset
//!   not divisible by 2/4: the reply is DIRECT_REPLY_ERROR and nothing of the command runs.
//!   It checks no later parameter's constant, no direction, no jump target and no variable
//!   against the header's memory; see [the firmware's validator](ops#the-firmwares-validator).
//! * **DIRECT_REPLY_ERROR** means the command was not (completely) executed: refused as
//!   above, or the virtual machine failed while running it, after the operations before the
//!   fault ran. The reply carries the command's global bytes whatever its status
//!   (`c_com.c:3508`); after an error they mean nothing. The simulated brick refuses before
//!   running what the validator refuses, and also an operation its table of operations does
//!   not hold and an output given as a constant; a fault while running ends the command
//!   there.
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
//! | `0x8F` | TIMER_READ_US | *TIME (DATA32) | the brick's free-running microsecond clock (wraps after about 71 minutes; only differences mean anything) |
//! | `0xC8`/`0xC9`/`0xCA` | READ8/16/32 | ARRAY, INDEX (DATA8), *DST | DST = `ARRAY[INDEX]`, ARRAY a variable, INDEX in elements |
//! | `0xCC`/`0xCD`/`0xCE` | WRITE8/16/32 | SRC, INDEX (DATA8), ARRAY | `ARRAY[INDEX]` = SRC |
//!
//! The code one above each DATA32 member (`0x13`, `0x3B`, `0x47`, …) is its DATAF member,
//! not used here. The firmware's rules that a program relies on:
//!
//! * **Widths.** The virtual machine decodes every parameter to a pointer
//!   (`lms2012.c`, `PrimParPointer`): a constant is first widened to 32 bits, a variable is
//!   its address; the opcode then reads (or writes) its own width there. So a constant
//!   fits any width it is in range of (an operation's first parameter must be in its
//!   kind's range, see above), and a variable must be as wide as the opcode says
//!   (a DATA32 opcode on a DATA8 variable reads three bytes past it). Arithmetic wraps.
//! * **Jumps.** OFFSET counts from the first byte after the jump instruction (the virtual
//!   machine adds it to its instruction pointer once all parameters are read); a negative
//!   OFFSET jumps back. Jumping to the end of the operations ends the program. [`Program`]
//!   writes each OFFSET, once every target is known, in the shortest constant that holds
//!   it (LC0, LC1 or LC2): the firmware reads a jump's OFFSET like any other parameter.
//! * **Indices are not checked** by READ/WRITE: the host must keep them inside the array.
//! * **Alignment.** DATA16 and DATA32 variables sit at offsets divisible by 2 and 4 (the
//!   validator refuses a command with one that does not, input or output, global or local).
//! * **Memory.** Global memory comes back in the reply, so at most [`MAX_GLOBALS`] = 1019
//!   bytes (1024 minus length, counter and status; `c_com.c` loads a command asking for up
//!   to 1021, `MAX_COMMAND_GLOBALS`, but no reply carries that); local memory is scratch,
//!   at most [`MAX_LOCALS`] = 63 bytes (six bits of the header); the whole command at most
//!   [`MAX_MESSAGE`] bytes.
//! * **Time.** The virtual machine runs a program up to 2000 instructions or 2 ms
//!   (`PRG_PRIORITY`, the preemption timer) before it serves the communication module and
//!   the other program slots, then carries on; a loop runs as long as it loops. The reply
//!   goes out when the program ends, and until then the brick reads no other command (see
//!   above): one sent meanwhile, OUTPUT_STOP included, runs only after it. OUTPUT_READY waits without a time
//!   limit, so a program here never uses it: it polls OUTPUT_TEST and TIMER_READ in a loop
//!   with a deadline and stops the motors itself when the deadline passes.
//!
//! P1: count down from 5 in a local (4 local bytes: header `00 10`): `LV0 = 5`
//! (`3A 05 40`), `LV0 = LV0 − 1` (`16 40 01 40`), back by 8 bytes while `LV0 > 0`
//! (`6A 40 00 38`, the offset in LC0; `6A 40 00 82 F6 FF` in LC2 is the same jump).
//! ```text
//! → 10 00 | 10 00 | 00 | 00 10 | 3A 05 40 | 16 40 01 40 | 6A 40 00 38
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
pub mod command;
pub mod exchange;
pub mod frame;
pub mod ops;
pub mod params;
pub mod reply;

pub use command::{DirectCommand, Slot, SlotKind};
pub use frame::{
    decode_command, CommandFrame, FrameBuffer, DIRECT_COMMAND_NO_REPLY, DIRECT_COMMAND_REPLY,
    DIRECT_REPLY, DIRECT_REPLY_ERROR, MAX_MESSAGE, SYSTEM_COMMAND_NO_REPLY, SYSTEM_COMMAND_REPLY,
    SYSTEM_REPLY_ERROR,
};
pub use params::{decode_param, push_const, push_global, Param};
pub use reply::{decode_reply, encode_reply, Reply};

pub use ops::op;

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
