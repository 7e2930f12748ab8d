/*
 * tpevent: interprocess events handed over a Unix-domain socket, for processes that
 * share no PID namespace, no /dev/shm and no /proc (containers that share only a
 * bind-mounted socket path). Part of the stable API; included by <tpevent/tpevent.h>,
 * not on its own.
 *
 * An event created with TP_EVENT_INTERPROCESS travels as a descriptor of a sealed
 * memfd holding its record state (SCM_RIGHTS) together with a 128-byte versioned,
 * checksummed message. Nothing in it names a pid or a path, so the two processes may
 * be in different PID, IPC and mount namespaces; the receiver's event stays valid
 * when the sender exits. Either side may record it and wait on it: rules 3 to 6 and 9
 * hold as in one process. docs/interprocess.md says which path to use when
 * (tp_event_ipc_handle or this).
 */
#ifndef TPEVENT_IPC_H
#define TPEVENT_IPC_H

#ifndef TPEVENT_TPEVENT_H
#error "include <tpevent/tpevent.h>, which includes this header"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Sends the event over `socket_fd`, a connected AF_UNIX socket of any type (stream,
 * datagram, seqpacket), as one message and one descriptor. Only for events created
 * with TP_EVENT_INTERPROCESS (else TP_ERR_INVALID_ARGUMENT); a backend without it
 * (OpenCL, Vulkan) is TP_ERR_UNSUPPORTED with the reason. A socket that is not AF_UNIX, or
 * whose peer is gone, is TP_ERR_INVALID_ARGUMENT; a non-blocking socket whose buffer
 * is full is TP_ERR_NOT_READY (nothing was sent). Blocks only as the socket does.
 * The event may be sent any number of times, to any number of processes.
 */
TP_API tp_status tp_event_ipc_send(tp_event *event, int socket_fd);

/*
 * Receives an event sent by tp_event_ipc_send from `socket_fd`, blocking as the
 * socket does (non-blocking with no message waiting: TP_ERR_NOT_READY). `device` NULL
 * means the sender's device; a device string must be of the sender's type, and its
 * index picks the device here. A forged, truncated or corrupted message, none or more
 * than one descriptor, a descriptor that is not a sealed memfd of the right size, a
 * peer that closed the socket mid-message, or on a non-blocking socket sent nothing
 * more of a message begun for 10 s: TP_ERR_INVALID_ARGUMENT naming what was
 * wrong; no descriptor received is left open, and nothing is ever mapped that a peer
 * could shrink under this process.
 */
TP_API tp_status tp_event_ipc_recv(tp_event **out, int socket_fd, const char *device);

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_IPC_H */
