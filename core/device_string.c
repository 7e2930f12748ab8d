/*
 * Device strings: parsing and formatting. The names of the device types come from
 * their list (cmake/TpeventDeviceTypes.cmake, as core/device_types.h).
 *
 * Grammar, strict on purpose (a typo must not silently pick another device):
 *     device := type [ ":" index ]
 *     type   := one of the list's names: "cpu" | "cuda" | ...
 *     index  := "0" | [1-9][0-9]*        (below TP_MAX_DEVICES)
 */
#include "core/internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The public enum is written out in tpevent.h (an installed header includes nothing
 * generated); its values are the list's. */
#define CHECK_PUBLIC_VALUE(upper, name, value, kind) \
    _Static_assert(TP_DEVICE_##upper == value, "tp_device_type's TP_DEVICE_" #upper " is not the list's " #value);
TP_PUBLIC_DEVICE_TYPES(CHECK_PUBLIC_VALUE)
#undef CHECK_PUBLIC_VALUE
#define COUNT_ONE(upper, name, value, kind) +1
_Static_assert(0 TP_DEVICE_TYPES(COUNT_ONE) == TP_DEVICE_TYPE_COUNT, "the core's tables count every type it knows");
#undef COUNT_ONE

#define NAME_OF(upper, name, value, kind) [value] = #name,
static const char *const type_names[TP_DEVICE_TYPE_COUNT] = {TP_DEVICE_TYPES(NAME_OF)};
#undef NAME_OF

/*
 * TP_DEVICE_STRING_MAX holds the longest string tp_device_str can write: a type name
 * (or "?"), ':' and any int, whatever index it is given (tp_device_format only ever
 * writes indices below TP_MAX_DEVICES).
 */
#define LONGEST_INDEX ":-2147483648"
_Static_assert(INT_MIN == -2147483647 - 1, "LONGEST_INDEX is INT_MIN's text");
#define FITS(upper, name, value, kind) &&sizeof #name - 1 + sizeof LONGEST_INDEX <= TP_DEVICE_STRING_MAX
_Static_assert(sizeof "?" - 1 + sizeof LONGEST_INDEX <= TP_DEVICE_STRING_MAX TP_DEVICE_TYPES(FITS),
               "TP_DEVICE_STRING_MAX is too small for a device string tp_device_str writes");
#undef FITS

const char *tp_device_type_name(tp_device_type type)
{
    if ((unsigned)type >= TP_DEVICE_TYPE_COUNT)
        return NULL;
    return type_names[type];
}

const char *tp_device_str(tp_device device, char buf[static TP_DEVICE_STRING_MAX])
{
    const char *name = tp_device_type_name(device.type);
    if (device.index == TP_DEVICE_INDEX_CURRENT)
        snprintf(buf, TP_DEVICE_STRING_MAX, "%s", name ? name : "?");
    else
        snprintf(buf, TP_DEVICE_STRING_MAX, "%s:%d", name ? name : "?", device.index);
    return buf;
}

tp_status tp_device_format(tp_device device, char *buf, size_t size)
{
    char text[TP_DEVICE_STRING_MAX];
    if (!buf || size == 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_format: buf is NULL or size is 0");
    if (!tp_device_type_name(device.type))
        return tp_fail(TP_ERR_INVALID_DEVICE, "tp_device_format: device type %d is not a tp_device_type",
                       (int)device.type);
    if (device.index < TP_DEVICE_INDEX_CURRENT || device.index >= TP_MAX_DEVICES)
        return tp_fail(TP_ERR_INVALID_DEVICE, "tp_device_format: index %d out of range", device.index);
    tp_device_str(device, text);
    if (strlen(text) >= size)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_format: \"%s\" needs %zu bytes, buf has %zu", text,
                       strlen(text) + 1, size);
    memcpy(buf, text, strlen(text) + 1);
    return TP_OK;
}

static const char expected_form[] =
    "expected \"<type>\" or \"<type>:<index>\" with type one of " TP_KNOWN_DEVICE_TYPE_NAMES " and a decimal index";

/* The type at the start of str, and where it ends (at ':' or the end), or NULL.
 * Written out by hand: device strings are parsed on every create, so no strlen,
 * strchr or memcmp on the way. */
static const char *match_type(const char *str, tp_device_type *type)
{
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        const char *name = type_names[t], *p = str;
        while (*name && *p == *name)
            p++, name++;
        if (*name == '\0' && (*p == ':' || *p == '\0')) {
            *type = (tp_device_type)t;
            return p;
        }
    }
    return NULL;
}

static tp_status unknown_type(const char *str)
{
    size_t type_len = strcspn(str, ":");
    if (type_len == 0)
        return tp_fail(TP_ERR_INVALID_DEVICE, "missing device type in \"%s\": %s", str, expected_form);
    return tp_fail(TP_ERR_INVALID_DEVICE,
                   "unknown device type '%.*s' in \"%s\" (known: " TP_KNOWN_DEVICE_TYPE_NAMES ")", (int)type_len, str,
                   str);
}

static tp_status parse_index(const char *whole, const char *digits, int *index)
{
    if (*digits == '\0')
        return tp_fail(TP_ERR_INVALID_DEVICE, "missing device index after ':' in \"%s\": %s", whole, expected_form);
    if (*digits == '+' || *digits == '-')
        return tp_fail(TP_ERR_INVALID_DEVICE, "signed device index in \"%s\": %s", whole, expected_form);
    long value = 0;
    const char *p = digits;
    for (; *p >= '0' && *p <= '9'; p++) {
        value = value * 10 + (*p - '0');
        if (value >= TP_MAX_DEVICES)
            return tp_fail(TP_ERR_INVALID_DEVICE, "device index in \"%s\" is too large (at most %d)", whole,
                           TP_MAX_DEVICES - 1);
    }
    if (p == digits)
        return tp_fail(TP_ERR_INVALID_DEVICE, "device index in \"%s\" is not a decimal number: %s", whole,
                       expected_form);
    if (*p != '\0')
        return tp_fail(TP_ERR_INVALID_DEVICE, "unexpected '%c' after the device index in \"%s\": %s", *p, whole,
                       expected_form);
    if (digits[0] == '0' && p - digits > 1)
        return tp_fail(TP_ERR_INVALID_DEVICE, "device index in \"%s\" has a leading zero: %s", whole, expected_form);
    *index = (int)value;
    return TP_OK;
}

tp_status tp_device_parse(const char *str, tp_device *out)
{
    if (!str)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_parse: device string is NULL");
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_parse: out is NULL");
    if (*str == '\0')
        return tp_fail(TP_ERR_INVALID_DEVICE, "empty device string: %s", expected_form);

    tp_device device = {.index = TP_DEVICE_INDEX_CURRENT};
    const char *rest = match_type(str, &device.type);
    if (!rest)
        return unknown_type(str);
    tp_status status = TP_OK;
    if (*rest == ':')
        status = parse_index(str, rest + 1, &device.index);
    if (status != TP_OK)
        return status;
    *out = device;
    return TP_OK;
}

bool tp_device_type_of(const char *str, tp_device_type *type)
{
    return match_type(str, type) != NULL;
}
