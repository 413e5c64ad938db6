/* ProcessPrng for wine releases older than 9.0, which have no bcryptprimitives.dll: Rust's std
 * (1.78 and later) imports it on Windows for its random seeds. It fills the buffer from the
 * system's RNG, as the real one does. Built by scripts/test-windows.sh; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
