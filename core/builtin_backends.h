/*
 * The backends' entry functions, and which are linked into the core library: the
 * one place where the core names a backend, and it names them through the list of
 * device types (cmake/TpeventDeviceTypes.cmake, written out as core/device_types.h).
 * core/registry.c's list of backends takes its built-in entries from here and
 * includes nothing of any backend.
 *
 * Each entry has the shape of tp_backend_entry_fn (core/backend.h): `core_abi` is the
 * ABI the core speaks; a backend that cannot speak it returns
 * TP_ERR_BACKEND_UNAVAILABLE with a reason. tp_backend_entry_<name> is defined by
 * the backend of that name: the CPU's is always built in; a MODULE type's only by a
 * static build (TPEVENT_BUILTIN_<NAME>, from cmake/TpeventStatic.cmake), and
 * otherwise the module is loaded through TP_BACKEND_ENTRY_SYMBOL.
 *
 * Every entry is declared whatever the build, so that a backend's own sources can
 * include this header for the declaration of the entry they define. What is built
 * in is said by TP_BUILTIN_ENTRY_<NAME> (core/device_types.h): the entry, or NULL for
 * a backend that the core loads as a module.
 */
#ifndef TPEVENT_CORE_BUILTIN_BACKENDS_H
#define TPEVENT_CORE_BUILTIN_BACKENDS_H

#include "core/backend.h"
#include "core/device_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TP_DECLARE_BACKEND_ENTRY(upper, name, value, kind) \
    tp_status tp_backend_entry_##name(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);
TP_DEVICE_TYPES(TP_DECLARE_BACKEND_ENTRY)
#undef TP_DECLARE_BACKEND_ENTRY

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_CORE_BUILTIN_BACKENDS_H */
