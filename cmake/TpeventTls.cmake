# tpevent_tls_descriptors(target): the target's thread-local variables are reached
# through TLS descriptors (-mtls-dialect=gnu2) where the compiler and processor have
# them. The core (current device and streams, the last error) and the GPU modules
# (each thread's cache of freed event structs) are shared objects, usually dlopen'ed:
# their TLS is dynamic, and each access is otherwise a call to __tls_get_addr (about
# 11 instructions on glibc), twice in every tp_event_create+destroy on a GPU. A
# descriptor makes it a few instructions, without needing static TLS.
include(CheckCCompilerFlag)
check_c_compiler_flag(-mtls-dialect=gnu2 TPEVENT_HAVE_TLSDESC)

function(tpevent_tls_descriptors target)
  if(TPEVENT_HAVE_TLSDESC AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    target_compile_options(${target} PRIVATE -mtls-dialect=gnu2)
  endif()
endfunction()
