#include <gtest/gtest.h>

#include "base/util/csv.hpp"
#include "kernels/sweep.hpp"

using namespace ks::kernels;

TEST(Csv, QuotedFieldsAndBlankLines) {
  const CsvTable t = CsvTable::parse("a,b,c\n1,\"x, \"\"y\"\"\",3\n\n4,5,\n", "t.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.cell(0, "b"), "x, \"y\"");
  EXPECT_EQ(t.number(1, "a"), 4.0);
  EXPECT_FALSE(t.number(1, "c").has_value());
  EXPECT_EQ(t.line_of(1), 4u);
}

TEST(Csv, ErrorsNameFileLineAndColumn) {
  try {
    CsvTable::parse("a,b\n1,2\n3\n", "t.csv");
    FAIL();
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:3"), std::string::npos) << e.what();
  }
  const CsvTable t = CsvTable::parse("a,b\n1,zz\n", "t.csv");
  try {
    t.number(0, "b");
    FAIL();
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:2: column 'b'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CsvTable::parse("", "e.csv"), CsvError);
  EXPECT_THROW(CsvTable::parse("a\n\"open\n", "q.csv"), CsvError);
  EXPECT_THROW(CsvTable::read_file("/nonexistent.csv"), CsvError);
}

TEST(Sweep, RowsBecomeKernelsWithTheDecomposerConventions) {
  const auto rows = parse_sweep(
      "gpu,source,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us\n"
      "a100_sxm_80gb,s,gemm,bf16,64,4096,2048,,,,,,,,,10\n"
      "a100_sxm_80gb,s,rmsnorm,fp16,,,,,128,4096,,,,,,3\n"
      "a100_sxm_80gb,s,attention_decode,bf16,,,,8,,,32,8,128,,1000,20\n",
      "s.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].kernel.flops, 2.0 * 64 * 4096 * 2048);
  EXPECT_DOUBLE_EQ(rows[0].kernel.bytes, (64.0 * 2048 + 64.0 * 4096) * 2 + 4096.0 * 2048 * 2);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 10e-6);
  EXPECT_EQ(rows[1].kernel.op, OpKind::RmsNorm);
  EXPECT_DOUBLE_EQ(rows[1].kernel.bytes, (2.0 * 128 * 4096 + 4096) * 2);
  // Decode: 8 sequences x 1000 context: K and V of 8 KV heads x 128 dims, 2 bytes each.
  EXPECT_DOUBLE_EQ(rows[2].kernel.flops, 4.0 * 32 * 128 * 8000);
  EXPECT_GT(rows[2].kernel.bytes, 8000.0 * 2 * 8 * 128 * 2);
  // Round trip through the writer.
  const auto again = parse_sweep(format_sweep(rows), "again.csv");
  ASSERT_EQ(again.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(again[i].kernel.flops, rows[i].kernel.flops);
    EXPECT_DOUBLE_EQ(again[i].kernel.bytes, rows[i].kernel.bytes);
    EXPECT_NEAR(again[i].seconds, rows[i].seconds, 1e-12);
  }
}

TEST(Sweep, BadRowsNameLineAndColumn) {
  const std::string head = "gpu,source,op,dtype,m,n,k,time_us\n";
  auto error_of = [&](const std::string& row) {
    try {
      parse_sweep(head + row, "s.csv");
    } catch (const CsvError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("g,s,conv,bf16,1,1,1,5\n").find("s.csv:2: column 'op'"), std::string::npos);
  EXPECT_NE(error_of("g,s,gemm,bf17,1,1,1,5\n").find("column 'dtype'"), std::string::npos);
  EXPECT_NE(error_of("g,s,gemm,bf16,0,1,1,5\n").find("gemm needs m, n, k > 0"), std::string::npos);
  EXPECT_NE(error_of("g,s,gemm,bf16,1,1,1,-5\n").find("column 'time_us'"), std::string::npos);
  EXPECT_NE(error_of("g,s,gemm,bf16,1.5,1,1,5\n").find("column 'm'"), std::string::npos);
}
