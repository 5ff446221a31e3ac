// cast.cu: Cast between every pair of storage types (cast_S_D converts an
// S source into a D destination) and the truth casts into Bool
// (truth_S: 1 where the source is not zero, NaN included). The conversion
// is nd/cpu/dtype.go's: floats become integers by truncation toward zero,
// saturating, NaN becoming 0; integers narrow with wrap-around. Bool
// sources use the u8 kernels (they hold 0 or 1), and Bool to uint8 is a
// plain copy.
#include "common.cuh"

#define CAST(SS, S, DS, D)                                                                  \
	extern "C" __global__ void cast_##SS##_##DS(D* d, const S* s, i64 n) {                  \
		GRID_LOOP(i, n) { d[i] = convert<D, S>(s[i]); }                                 \
	}

#define TRUTH(SS, S)                                                                    \
	extern "C" __global__ void truth_##SS(u8* d, const S* s, i64 n) {                       \
		GRID_LOOP(i, n) { d[i] = s[i] != 0 ? 1 : 0; }                                   \
	}

TRUTH(f32, float)
TRUTH(f64, double)
TRUTH(i32, int)
TRUTH(i64, i64)
TRUTH(u8, u8)

CAST(f32, float, f64, double)
CAST(f32, float, i32, int)
CAST(f32, float, i64, i64)
CAST(f32, float, u8, u8)
CAST(f64, double, f32, float)
CAST(f64, double, i32, int)
CAST(f64, double, i64, i64)
CAST(f64, double, u8, u8)
CAST(i32, int, f32, float)
CAST(i32, int, f64, double)
CAST(i32, int, i64, i64)
CAST(i32, int, u8, u8)
CAST(i64, i64, f32, float)
CAST(i64, i64, f64, double)
CAST(i64, i64, i32, int)
CAST(i64, i64, u8, u8)
CAST(u8, u8, f32, float)
CAST(u8, u8, f64, double)
CAST(u8, u8, i32, int)
CAST(u8, u8, i64, i64)

// Half-precision storage: Float16 (f16) and BFloat16 (bf16) hold u16 bits
// and convert through float, as nd/cpu does: decoding is exact, encoding
// rounds once from float (so a double rounds twice, through float).
#define HALF_CASTS(HS, TOF, FROMF)                                                        \
	extern "C" __global__ void truth_##HS(u8* d, const u16* s, i64 n) {                   \
		GRID_LOOP(i, n) { d[i] = (s[i] & 0x7fff) != 0 ? 1 : 0; }                      \
	}                                                                                     \
	HALF_FROM(HS, TOF, f32, float)                                                        \
	HALF_FROM(HS, TOF, f64, double)                                                       \
	HALF_FROM(HS, TOF, i32, int)                                                          \
	HALF_FROM(HS, TOF, i64, i64)                                                          \
	HALF_FROM(HS, TOF, u8, u8)                                                            \
	HALF_TO(HS, FROMF, f32, float)                                                        \
	HALF_TO(HS, FROMF, f64, double)                                                       \
	HALF_TO(HS, FROMF, i32, int)                                                          \
	HALF_TO(HS, FROMF, i64, i64)                                                          \
	HALF_TO(HS, FROMF, u8, u8)

#define HALF_FROM(HS, TOF, DS, D)                                                         \
	extern "C" __global__ void cast_##HS##_##DS(D* d, const u16* s, i64 n) {              \
		GRID_LOOP(i, n) { d[i] = convert<D, float>(TOF(s[i])); }                      \
	}
#define HALF_TO(HS, FROMF, SS, S)                                                         \
	extern "C" __global__ void cast_##SS##_##HS(u16* d, const S* s, i64 n) {              \
		GRID_LOOP(i, n) { d[i] = FROMF(convert<float, S>(s[i])); }                    \
	}

HALF_CASTS(f16, halfToFloat, floatToHalf)
HALF_CASTS(bf16, bf16ToFloat, floatToBf16)

extern "C" __global__ void cast_f16_bf16(u16* d, const u16* s, i64 n) {
	GRID_LOOP(i, n) { d[i] = floatToBf16(halfToFloat(s[i])); }
}
extern "C" __global__ void cast_bf16_f16(u16* d, const u16* s, i64 n) {
	GRID_LOOP(i, n) { d[i] = floatToHalf(bf16ToFloat(s[i])); }
}
