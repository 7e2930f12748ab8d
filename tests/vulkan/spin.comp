// tpevent's measure tests' work of a known length (tests/vulkan/measure_shader.c):
// one invocation spins on the device's shader clock (VK_KHR_shader_clock's
// shaderDeviceClock, GLSL's clockRealtime2x32EXT) until `ticks` of it have passed,
// then writes how many passed into `result`. A loaded host only makes it longer,
// never shorter: the clock runs on whether the invocation runs or not.
//
// What lavapipe (Mesa 22.3) does, probed with a shader writing both clocks into a
// buffer: both shader clocks read CLOCK_MONOTONIC in ns (Mesa's os_time_get_nano,
// the clock of its timestamps too), but the high word is always 0 (its split of the
// 64-bit value shifts left), so only the low word is read here: a spin is at most
// 2^32 ticks (4.29 s of ns). llvmpipe ends a shader's loops after 65535 iterations
// in all (its guard against endless shaders; a loop of loops counts the inner ones
// too), so a loop reading the clock once an iteration would end after ~2 ms: each
// iteration also runs 256 steps of a xorshift chain, unrolled (~0.3-0.5 us there),
// for ~20-30 ms at most. A loop whose results nobody reads is deleted (a spin of 20
// ms took no time), hence the write.
//
// Compiled to spin_spv.inc (a C array) by tests/vulkan/CMakeLists.txt where
// glslangValidator is found; the committed spin_spv.inc is for machines without it,
// and vulkan.spirv_matches_source checks it is this file's compile.
#version 450
#extension GL_EXT_shader_realtime_clock : require

layout(local_size_x = 1) in;

layout(push_constant) uniform Spin {
    uint ticks; // of the device clock, below 2^32
} spin;

layout(std430, binding = 0) buffer Result {
    uint elapsed; // the ticks that passed
    uint chain;   // the chain's end: read by nobody, written so that it is kept
} result;

#define STEP x ^= x << 13u; x ^= x >> 17u; x ^= x << 5u;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP
#define STEP64 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8
#define STEP256 STEP64 STEP64 STEP64 STEP64

void main()
{
    uint start = clockRealtime2x32EXT().x;
    uint x = start | 1u;
    uint elapsed = 0u;
    while (elapsed < spin.ticks) {
        STEP256
        elapsed = clockRealtime2x32EXT().x - start;
    }
    result.elapsed = elapsed;
    result.chain = x;
}
