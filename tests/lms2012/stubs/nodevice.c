/*
 * nodevice: the "nothing is connected" stand-in for the five host libraries LEGO's PC build
 * of the EV3 VM links against (libusb-1.0, dbus-1, bluetooth, X11, Xpm).
 *
 * The firmware brick is a headless process on a machine without a Bluetooth radio, an
 * X display, a USB host port for daisy chains or a D-Bus session it may use. The VM only
 * needs these libraries to link, and at run time it must see "no such device" from every one
 * of them, which it already handles: no display (XOpenDisplay gives NULL, and the LCD code
 * skips drawing), no HCI adapter (Bluetooth stays off), no daisy-chained brick (libusb fails).
 * Each function below returns the failure value its real counterpart uses, so none of the
 * firmware's error paths meets a value it does not expect. Built for 32 bits as
 * libcubot_nodevice.so; the build script names it as the five libraries with linker scripts.
 *
 * The signatures take no parameters on purpose: under the i386 C calling convention the
 * caller removes its own arguments, so a function that ignores them may declare none, and
 * this file needs none of the libraries' headers.
 *
 * Copyright the cubot authors. MIT OR Apache-2.0.
 */
#include <string.h>

#define NODEV_NULL(name) void *name(void) { return 0; }
#define NODEV_INT(name, value) int name(void) { return value; }

/* ---- X11 / Xpm: no display. Xlib's Status and Bool use 0 for failure / False. ---- */
NODEV_NULL(XOpenDisplay)
NODEV_INT(XCloseDisplay, 0)
NODEV_INT(XAllocColor, 0)
NODEV_INT(XCheckMaskEvent, 0)
NODEV_INT(XCopyArea, 0)
NODEV_NULL(XCreateGC)
NODEV_INT(XCreatePixmap, 0)
NODEV_INT(XCreateWindow, 0)
NODEV_INT(XDefaultColormap, 0)
NODEV_INT(XFlush, 0)
NODEV_INT(XFreeGC, 0)
NODEV_INT(XFreePixmap, 0)
NODEV_INT(XInitImage, 0)
NODEV_INT(XMapWindow, 0)
NODEV_INT(XNextEvent, 0)
NODEV_INT(XPutImage, 0)
NODEV_INT(XSelectInput, 0)
NODEV_INT(XSetBackground, 0)
NODEV_INT(XSetForeground, 0)
NODEV_INT(XSetStandardProperties, 0)
NODEV_INT(XSetWindowBackground, 0)
NODEV_INT(XpmReadFileToImage, -1) /* XpmOpenFailed */

/* ---- libusb-1.0: no host controller to search for a daisy-chained brick. ---- */
#define LIBUSB_ERROR_NOT_SUPPORTED (-12)
NODEV_INT(libusb_init, LIBUSB_ERROR_NOT_SUPPORTED)
void libusb_exit(void) {}
NODEV_NULL(libusb_open_device_with_vid_pid)
NODEV_NULL(libusb_get_device)
void libusb_close(void) {}
NODEV_INT(libusb_claim_interface, LIBUSB_ERROR_NOT_SUPPORTED)
NODEV_INT(libusb_release_interface, LIBUSB_ERROR_NOT_SUPPORTED)
NODEV_INT(libusb_detach_kernel_driver, LIBUSB_ERROR_NOT_SUPPORTED)
NODEV_INT(libusb_get_max_packet_size, LIBUSB_ERROR_NOT_SUPPORTED)
NODEV_INT(libusb_handle_events_timeout, LIBUSB_ERROR_NOT_SUPPORTED)
NODEV_NULL(libusb_alloc_transfer)
void libusb_free_transfer(void) {}
NODEV_INT(libusb_submit_transfer, LIBUSB_ERROR_NOT_SUPPORTED)

/* ---- BlueZ: no HCI adapter, no SDP server. ---- */
NODEV_INT(hci_get_route, -1)
NODEV_INT(hci_open_dev, -1)
NODEV_INT(hci_close_dev, 0)
NODEV_INT(hci_send_cmd, -1)
NODEV_NULL(sdp_connect)
NODEV_INT(sdp_close, 0)
NODEV_NULL(sdp_record_alloc)
NODEV_INT(sdp_record_register, -1)
NODEV_NULL(sdp_list_append)
void sdp_list_free(void) {}
NODEV_NULL(sdp_data_alloc)
void sdp_data_free(void) {}
NODEV_INT(sdp_set_access_protos, -1)
NODEV_INT(sdp_set_info_attr, 0)
NODEV_INT(sdp_set_profile_descs, -1)
NODEV_INT(sdp_set_service_id, 0)
NODEV_INT(sdp_set_uuidseq_attr, -1)
NODEV_NULL(sdp_uuid128_create)
NODEV_NULL(sdp_uuid16_create)

/* A Bluetooth address as text: the all-zero address, which is what the firmware assumes
 * when it has none (it fills its own address with zeros). */
int ba2str(const void *addr, char *text)
{
    (void)addr;
    strcpy(text, "00:00:00:00:00:00");
    return 17;
}

int str2ba(const char *text, void *addr)
{
    (void)text;
    memset(addr, 0, 6);
    return 0;
}

/* ---- D-Bus: no system bus. ---- */
NODEV_NULL(dbus_bus_get)
void dbus_bus_add_match(void) {}
NODEV_INT(dbus_connection_add_filter, 0)
void dbus_connection_flush(void) {}
NODEV_INT(dbus_connection_read_write_dispatch, 0)
NODEV_INT(dbus_connection_register_object_path, 0)
NODEV_INT(dbus_connection_unregister_object_path, 0)
NODEV_INT(dbus_connection_send, 0)
NODEV_INT(dbus_connection_send_with_reply, 0)
NODEV_NULL(dbus_connection_send_with_reply_and_block)
void dbus_connection_unref(void) {}
void dbus_error_init(void) {}
void dbus_error_free(void) {}
NODEV_INT(dbus_error_is_set, 0)
NODEV_INT(dbus_message_append_args, 0)
NODEV_INT(dbus_message_get_args, 0)
NODEV_INT(dbus_message_is_method_call, 0)
NODEV_INT(dbus_message_is_signal, 0)
NODEV_NULL(dbus_message_new_error)
NODEV_NULL(dbus_message_new_method_call)
NODEV_NULL(dbus_message_new_method_return)
void dbus_message_unref(void) {}
NODEV_INT(dbus_pending_call_set_notify, 0)
