/* Unit tests: the device-string parser, through tp_device_parse and the calls that
 * take a device string. */
#include <stdio.h>

#include "check.h"

static void check_parses(const char *text, tp_device_type type, int index)
{
    tp_device device = {TP_DEVICE_HIP, 42};
    CHECK_OK(tp_device_parse(text, &device));
    if (device.type != type || device.index != index)
        check_failed(__FILE__, __LINE__, "\"%s\" parsed as type %d index %d, expected %d %d", text, (int)device.type,
                     device.index, (int)type, index);
}

/* The string is refused with TP_ERR_INVALID_DEVICE, the output is left alone, and
 * the message quotes the string as given. */
static void check_refused(const char *text)
{
    tp_device device = {TP_DEVICE_HIP, 42};
    tp_status status = tp_device_parse(text, &device);
    if (status != TP_ERR_INVALID_DEVICE)
        check_failed(__FILE__, __LINE__, "tp_device_parse(\"%s\") returned %s, expected %s", text,
                     tp_status_name(status), tp_status_name(TP_ERR_INVALID_DEVICE));
    CHECK(device.type == TP_DEVICE_HIP && device.index == 42);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", text);
    CHECK_ERROR_MENTIONS(quoted);
}

TEST(parse_type_without_index)
{
    check_parses("cpu", TP_DEVICE_CPU, TP_DEVICE_INDEX_CURRENT);
    check_parses("cuda", TP_DEVICE_CUDA, TP_DEVICE_INDEX_CURRENT);
    check_parses("hip", TP_DEVICE_HIP, TP_DEVICE_INDEX_CURRENT);
    return 0;
}

TEST(parse_type_with_index)
{
    check_parses("cpu:0", TP_DEVICE_CPU, 0);
    check_parses("cuda:1", TP_DEVICE_CUDA, 1);
    check_parses("hip:7", TP_DEVICE_HIP, 7);
    check_parses("cuda:10", TP_DEVICE_CUDA, 10);
    return 0;
}

TEST(parse_largest_index)
{
    char text[32];
    snprintf(text, sizeof text, "cuda:%d", TP_MAX_DEVICES - 1);
    check_parses(text, TP_DEVICE_CUDA, TP_MAX_DEVICES - 1);
    return 0;
}

TEST(parse_never_checks_existence)
{
    /* Parsing does not ask the backend: a GPU index parses on a machine with none. */
    check_parses("hip:3", TP_DEVICE_HIP, 3);
    check_parses("cpu:63", TP_DEVICE_CPU, 63);
    return 0;
}

TEST(parse_refuses_empty)
{
    tp_device device = {TP_DEVICE_HIP, 42};
    CHECK_STATUS(tp_device_parse("", &device), TP_ERR_INVALID_DEVICE);
    CHECK(device.type == TP_DEVICE_HIP && device.index == 42);
    /* Quoting "" would say little; the message says the string is empty. */
    CHECK_ERROR_MENTIONS_WORD("empty");
    return 0;
}

TEST(parse_refuses_null)
{
    tp_device device = {TP_DEVICE_HIP, 42};
    tp_status status = tp_device_parse(NULL, &device);
    /* NULL is no string at all: a bad argument, like any NULL pointer. */
    CHECK_STATUS(status, TP_ERR_INVALID_ARGUMENT);
    CHECK(device.type == TP_DEVICE_HIP && device.index == 42);
    CHECK(tp_last_error()[0] != '\0');
    return 0;
}

TEST(parse_refuses_unknown_type)
{
    check_refused("cdua:0");
    CHECK_ERROR_MENTIONS("'cdua'");
    CHECK_ERROR_MENTIONS("cpu");
    CHECK_ERROR_MENTIONS("cuda");
    CHECK_ERROR_MENTIONS("hip");
    check_refused("gpu");
    CHECK_ERROR_MENTIONS("cpu");
    CHECK_ERROR_MENTIONS("cuda");
    CHECK_ERROR_MENTIONS("hip");
    return 0;
}

TEST(parse_refuses_missing_index)
{
    check_refused("cpu:");
    check_refused("cuda:");
    return 0;
}

TEST(parse_refuses_non_decimal_index)
{
    check_refused("cpu:x");
    check_refused("cpu:0x1");
    check_refused("cuda:1.0");
    return 0;
}

TEST(parse_refuses_minus_sign)
{
    check_refused("cpu:-1");
    check_refused("cpu:-0");
    return 0;
}

TEST(parse_refuses_plus_sign)
{
    check_refused("cpu:+1");
    return 0;
}

TEST(parse_refuses_overflow)
{
    check_refused("cpu:99999999999999999999");
    check_refused("cpu:4294967296");
    check_refused("cpu:2147483648");
    return 0;
}

TEST(parse_refuses_index_at_max_devices)
{
    char text[32];
    snprintf(text, sizeof text, "cpu:%d", TP_MAX_DEVICES);
    check_refused(text);
    check_refused("cuda:1000");
    return 0;
}

TEST(parse_refuses_leading_space)
{
    check_refused(" cpu");
    check_refused("\tcpu:0");
    return 0;
}

TEST(parse_refuses_space_before_colon)
{
    check_refused("cpu :0");
    return 0;
}

TEST(parse_refuses_space_after_colon)
{
    check_refused("cpu: 0");
    return 0;
}

TEST(parse_refuses_trailing_characters)
{
    check_refused("cpu:0x");
    check_refused("cpu:0 ");
    check_refused("cpu ");
    check_refused("cpu:0:1");
    check_refused("cpux");
    return 0;
}

TEST(parse_refuses_uppercase)
{
    check_refused("CPU");
    check_refused("Cuda:0");
    check_refused("HIP:1");
    return 0;
}

TEST(parse_refuses_missing_colon)
{
    check_refused("cpu0");
    check_refused(":0");
    return 0;
}

TEST(bad_device_string_refused_by_event_create)
{
    tp_event *untouched = (tp_event *)&untouched;
    tp_event *event = untouched;
    CHECK_STATUS(tp_event_create(&event, "cpu:x", TP_EVENT_DEFAULT), TP_ERR_INVALID_DEVICE);
    CHECK(event == untouched);
    CHECK_ERROR_MENTIONS("\"cpu:x\"");
    return 0;
}

TEST(bad_device_string_refused_by_stream_create)
{
    tp_stream *stream = NULL;
    CHECK_STATUS(tp_stream_create(&stream, "cdua:0", 0), TP_ERR_INVALID_DEVICE);
    CHECK(stream == NULL);
    CHECK_ERROR_MENTIONS("\"cdua:0\"");
    CHECK_ERROR_MENTIONS("cpu");
    return 0;
}

TEST(bad_device_string_refused_by_set_device)
{
    CHECK_STATUS(tp_set_device("cpu: 0"), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("\"cpu: 0\"");
    return 0;
}

TEST(bad_device_string_refused_by_device_synchronize)
{
    CHECK_STATUS(tp_device_synchronize("cpu:+1"), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("\"cpu:+1\"");
    CHECK_STATUS(tp_device_synchronize_for("cpu:+1", 0), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("\"cpu:+1\"");
    CHECK_STATUS(tp_device_synchronize_for("cpu:0", -1), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("negative");
    CHECK_OK(tp_device_synchronize_for("cpu:0", INT64_MAX)); /* idle: at once; INT64_MAX is forever */
    return 0;
}

TEST(bad_device_string_refused_by_stream_default)
{
    tp_stream *stream = NULL;
    CHECK_STATUS(tp_stream_default("CPU", &stream), TP_ERR_INVALID_DEVICE);
    CHECK(stream == NULL);
    CHECK_ERROR_MENTIONS("\"CPU\"");
    return 0;
}

TEST(device_index_out_of_range_refused)
{
    /* Parses, but the CPU backend has TPEVENT_CPU_DEVICES (2 here) devices. */
    tp_event *event = NULL;
    CHECK_STATUS(tp_event_create(&event, "cpu:5", TP_EVENT_DEFAULT), TP_ERR_INVALID_DEVICE);
    CHECK(event == NULL);
    CHECK_ERROR_MENTIONS("cpu:5");
    return 0;
}

TEST(device_format_round_trip)
{
    static const char *const texts[] = {"cpu:0", "cuda:1", "hip:63", "cpu:10"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        tp_device device;
        char buf[16];
        CHECK_OK(tp_device_parse(texts[i], &device));
        CHECK_OK(tp_device_format(device, buf, sizeof buf));
        if (strcmp(buf, texts[i]) != 0)
            check_failed(__FILE__, __LINE__, "\"%s\" formatted as \"%s\"", texts[i], buf);
    }
    return 0;
}

TEST(device_type_names)
{
    CHECK(strcmp(tp_device_type_name(TP_DEVICE_CPU), "cpu") == 0);
    CHECK(strcmp(tp_device_type_name(TP_DEVICE_CUDA), "cuda") == 0);
    CHECK(strcmp(tp_device_type_name(TP_DEVICE_HIP), "hip") == 0);
    CHECK(tp_device_type_name((tp_device_type)TP_DEVICE_TYPE_COUNT) == NULL);
    CHECK(tp_device_type_name((tp_device_type)-1) == NULL);
    return 0;
}
