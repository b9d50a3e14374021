//===- codegen/Spelling.cpp - CUDA spellings of types, literals, ops ------===//
#include "codegen/Spelling.h"

#include "support/Error.h"

#include <fmt/args.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace jitfuse::codegen {

std::string computeType(DType T) {
  switch (T) {
  case DType::Bool: return "bool";
  case DType::I32: return "int";
  case DType::I64: return "long long";
  case DType::F16:
  case DType::BF16:
  case DType::F32: return "float";
  case DType::F64: return "double";
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return "";
}

unsigned computeBytes(DType T) {
  switch (T) {
  case DType::Bool: return 1;
  case DType::I32:
  case DType::F16:
  case DType::BF16:
  case DType::F32: return 4;
  case DType::I64:
  case DType::F64: return 8;
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return 0;
}

std::string storageType(DType T) {
  switch (T) {
  case DType::Bool: return "jf_bool";
  case DType::F16: return "jf_f16";
  case DType::BF16: return "jf_bf16";
  default: return computeType(T);
  }
}

std::string loadConvert(DType T, const std::string &Stored, bool Pinned) {
  switch (T) {
  case DType::Bool: return "(" + Stored + " != 0)";
  case DType::F16:
    return (Pinned ? "jf_f16_to_float_pinned(" : "jf_f16_to_float(") + Stored + ")";
  case DType::BF16:
    return (Pinned ? "jf_bf16_to_float_mov(" : "jf_bf16_to_float(") + Stored + ")";
  default: return Stored;
  }
}

std::string storeConvert(DType T, const std::string &Value) {
  switch (T) {
  case DType::Bool: return "(jf_bool)(" + Value + ")";
  case DType::F16: return "jf_float_to_f16(" + Value + ")";
  case DType::BF16: return "jf_float_to_bf16(" + Value + ")";
  default: return Value;
  }
}

std::string promoteValue(DType From, DType To, const std::string &Value) {
  if (computeType(From) == computeType(To))
    return Value;
  if (To == DType::Bool)
    return "(" + Value + " != 0)";
  return "(" + computeType(To) + ")(" + Value + ")";
}

std::string castValue(DType From, DType To, const std::string &Value) {
  if (From == To)
    return Value;
  switch (To) {
  case DType::Bool:
    return "(" + Value + " != 0)";
  case DType::I32:
    return isFloat(From) ? "jf_to_i32((double)(" + Value + "))"
                         : "(int)(" + Value + ")";
  case DType::I64:
    return isFloat(From) ? "jf_to_i64((double)(" + Value + "))"
                         : "(long long)(" + Value + ")";
  // f64 and integers may not fit f32: round once, through f32 rounded to
  // odd (integers beyond 2^53 are inexact in double, as in the reference).
  case DType::BF16:
    if (From == DType::F64 || isInt(From))
      return "jf_f64_to_bf16_f((double)(" + Value + "))";
    return "jf_bf16_to_float(jf_float_to_bf16((float)(" + Value + ")))";
  case DType::F16:
    if (From == DType::F64 || isInt(From))
      return "jf_f64_to_f16_f((double)(" + Value + "))";
    return "jf_f16_to_float(jf_float_to_f16((float)(" + Value + ")))";
  case DType::F32:
  case DType::F64:
    return promoteValue(From, To, Value);
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return "";
}

std::string literal(double V, DType T) {
  switch (T) {
  case DType::Bool:
    return V != 0 ? "true" : "false";
  case DType::I32:
    return fmt::format("{}", static_cast<int32_t>(V));
  case DType::I64:
    // The builder saturates i64 constants to +-2^63 (roundToDType); +2^63
    // stands for INT64_MAX, and -2^63 has no positive literal to negate.
    if (V >= 9223372036854775808.0)
      return "9223372036854775807LL";
    if (V <= -9223372036854775808.0)
      return "(-9223372036854775807LL - 1)";
    return fmt::format("{}LL", static_cast<int64_t>(V));
  case DType::F64: {
    if (std::isnan(V))
      return "__longlong_as_double(0x7ff8000000000000LL)";
    if (std::isinf(V))
      return V > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                   : "__longlong_as_double((long long)0xfff0000000000000ULL)";
    std::string S = fmt::format("{}", V);
    if (S.find_first_of(".e") == std::string::npos)
      S += ".0";
    return "(" + S + ")";
  }
  default: {
    float F = static_cast<float>(V);
    if (std::isnan(F))
      return "__int_as_float(0x7fc00000)";
    if (std::isinf(F))
      return F > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
    std::string S = fmt::format("{}", F);
    if (S.find_first_of(".e") == std::string::npos)
      S += ".0";
    return "(" + S + "f)";
  }
  }
}

std::string opExpr(Op O, DType T, llvm::ArrayRef<std::string> X, bool FastMath) {
  bool D = T == DType::F64;
  // The intrinsics trade the libm expf and the IEEE division (about 60% of
  // a silu's instructions) for ex2.approx and div.approx; their error is
  // modelled in reference/ErrorBound.cpp. f64 has no such intrinsics.
  if (FastMath && !D && (O == Op::Sigmoid || O == Op::Silu))
    return fmt::format("__fdividef({}, 1.0f + __expf(-{}))",
                       O == Op::Sigmoid ? std::string("1.0f") : X[0], X[0]);
  // Everything else is the template of the op's row in ir/Ops.def.
  const OpInfo &Info = opInfo(O);
  const char *Template = isFloat(T) || !Info.CudaInt ? Info.Cuda : Info.CudaInt;
  JITFUSE_CHECK(Template && opKind(O) != OpKind::Reduce, "opExpr: not an element-wise op");
  JITFUSE_CHECK(X.size() == static_cast<size_t>(opArity(O)), "opExpr: operand count");
  fmt::dynamic_format_arg_store<fmt::format_context> Args;
  for (const std::string &Operand : X)
    Args.push_back(Operand);
  Args.push_back(fmt::arg("f", D ? "" : "f"));
  Args.push_back(fmt::arg("one", D ? "1.0" : "1.0f"));
  Args.push_back(fmt::arg("half", D ? "0.5" : "0.5f"));
  Args.push_back(fmt::arg("zero", literal(0, T)));
  // Named constants the templates use, as literals of the compute type.
  Args.push_back(fmt::arg("sqrt1_2", literal(M_SQRT1_2, T)));
  return fmt::vformat(Template, Args);
}

std::string reduceIdentity(Op O, DType AccT) {
  switch (O) {
  case Op::ReduceSum:
  case Op::ReduceMean:
    return literal(0, AccT);
  case Op::ReduceMax:
    if (isFloat(AccT))
      return literal(-INFINITY, AccT);
    return AccT == DType::I32 ? "(-2147483647 - 1)" : "(-9223372036854775807LL - 1)";
  case Op::ReduceMin:
    if (isFloat(AccT))
      return literal(INFINITY, AccT);
    return AccT == DType::I32 ? "2147483647" : "9223372036854775807LL";
  // Every op that is not a reduction.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_REDUCE(...)
#include "ir/Ops.def"
    break;
  }
  JITFUSE_UNREACHABLE("not a reduction");
  return "";
}

std::string reduceFunctor(Op O) {
  JITFUSE_CHECK(isReduction(O) && opInfo(O).Cuda, "not a reduction");
  return opInfo(O).Cuda;
}

std::string sanitizeIdent(llvm::StringRef S) {
  std::string Out;
  for (char C : S)
    Out += (std::isalnum(static_cast<unsigned char>(C)) ? C : '_');
  if (Out.size() > 32)
    Out.resize(32);
  return Out;
}

std::string sanitizeComment(llvm::StringRef S) {
  std::string Out;
  for (char C : S) {
    unsigned char U = static_cast<unsigned char>(C);
    Out += (U >= 32 && U < 127 && C != '\\') ? C : '?';
  }
  // Never let a name close the comment.
  for (size_t P; (P = Out.find("*/")) != std::string::npos;)
    Out[P] = '?';
  return Out;
}

} // namespace jitfuse::codegen
