// tfrun links its own copy of libstdc++ (.bazelrc), and the libraries it
// opens at run time (cuDNN, oneDNN, libmpi) bring the shared one. The two
// stay apart only if tfrun exports none of its copy's symbols: on a real
// GPU, cuDNN 9's shared libstdc++ bound its locale facets to tfrun's
// exported facet ids and crashed in `ostream << long` at the first
// convolution (2026-11-28, H200). This reads tfrun's dynamic symbol table.
#include <cxxabi.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// The defined symbols of an ELF64 file's .dynsym, by name.
std::vector<std::string> ExportedSymbols(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> names;
  if (bytes.size() < sizeof(Elf64_Ehdr)) return names;
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return names;
  auto section = [&](size_t i) {
    Elf64_Shdr s{};
    const size_t at = header.e_shoff + i * header.e_shentsize;
    if (at + sizeof s <= bytes.size()) std::memcpy(&s, bytes.data() + at, sizeof s);
    return s;
  };
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr dynsym = section(i);
    if (dynsym.sh_type != SHT_DYNSYM || dynsym.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr strtab = section(dynsym.sh_link);
    for (size_t at = dynsym.sh_offset; at + sizeof(Elf64_Sym) <= dynsym.sh_offset + dynsym.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + at, sizeof sym);
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strtab.sh_size) continue;
      names.emplace_back(bytes.data() + strtab.sh_offset + sym.st_name);
    }
  }
  return names;
}

std::string Demangled(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out = text;
  std::free(text);
  return out;
}

TEST(ExportedSymbolsTest, TfrunExportsNothingOfItsStandardLibrary) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an AddressSanitizer build links and exports its runtime differently; the released (-c opt) "
                  "binary is the one checked";
#endif
  const std::vector<std::string> names = ExportedSymbols("cli/tfrun");
  ASSERT_FALSE(names.empty()) << "cli/tfrun: no dynamic symbols read (not an ELF64 executable?)";
  for (const std::string& name : names) {
    const std::string what = Demangled(name);
    // A constant table local to a header's inline function (std::to_chars'
    // digits), instantiated in tfrun's own objects: the same bytes in every
    // copy, so binding another library to it is harmless.
    if (what.rfind("std::", 0) == 0 && what.find(")::") != std::string::npos) continue;
    for (const char* prefix : {"std::", "guard variable for std::", "vtable for std::", "typeinfo for std::",
                               "typeinfo name for std::", "VTT for std::"}) {
      EXPECT_NE(what.rfind(prefix, 0), 0u) << "cli/tfrun exports " << name << " (" << what << ")";
    }
  }
}

}  // namespace
