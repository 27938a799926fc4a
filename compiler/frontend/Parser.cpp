/// @file Parser.cpp
/// @brief Runs Clang on a .pl file and turns its collective aliases into a
/// purlin::Module. Clang-specific code lives here and in ClangDiagnostics.
#include "Parser.h"

#include "ClangDiagnostics.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/TypeLoc.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/Tooling.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace purlin {
namespace {

/// Where the embedded vocabulary header appears to Clang (a virtual file).
constexpr const char *kVocabDir = "/purlin-builtin/include";
constexpr const char *kVocabPath = "/purlin-builtin/include/purlin/dsl/purlin.h";

/// Spellings longer than this are cut (deeply nested types must not blow up
/// diagnostics or the AST dump).
constexpr size_t kMaxSpelling = 200;

std::string cut(std::string s) {
  if (s.size() > kMaxSpelling)
    s = s.substr(0, kMaxSpelling - 3) + "...";
  return s;
}

/// Builds Collective nodes from Clang types. One instance per translation unit.
class Collector {
public:
  Collector(clang::ASTContext &ctx, Module &module) : ctx_(ctx), sm_(ctx.getSourceManager()), module_(module) {
    printing_ = std::make_unique<clang::PrintingPolicy>(ctx.getLangOpts());
    printing_->SuppressScope = false;
    lookupVocabulary();
  }

  /// Walks the translation unit: namespaces and extern "C++" blocks are
  /// entered; aliases and Policy-derived structs of user files are recorded.
  void run() {
    if (!snac_ || !compose_) // vocabulary missing: nothing can be a collective
      return;
    walk(ctx_.getTranslationUnitDecl());
  }

private:
  /// Depth-first in source order with an explicit stack (no recursion).
  void walk(const clang::DeclContext *root) {
    struct Frame { clang::DeclContext::decl_iterator it, end; };
    std::vector<Frame> frames{{root->decls_begin(), root->decls_end()}};
    while (!frames.empty()) {
      Frame &f = frames.back();
      if (f.it == f.end) {
        frames.pop_back();
        continue;
      }
      const clang::Decl *d = *f.it++;
      if (!inUserFile(d))
        continue;
      if (auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d))
        frames.push_back({ns->decls_begin(), ns->decls_end()});
      else if (auto *ls = llvm::dyn_cast<clang::LinkageSpecDecl>(d))
        frames.push_back({ls->decls_begin(), ls->decls_end()});
      else if (auto *td = llvm::dyn_cast<clang::TypedefNameDecl>(d))
        alias(td);
      else if (auto *rd = llvm::dyn_cast<clang::CXXRecordDecl>(d))
        record(rd);
    }
  }

  void lookupVocabulary() {
    auto *tu = ctx_.getTranslationUnitDecl();
    const clang::NamespaceDecl *dsl = nullptr;
    for (auto *d : tu->decls())
      if (auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d); ns && ns->getName() == "purlin")
        for (auto *d2 : ns->decls())
          if (auto *ns2 = llvm::dyn_cast<clang::NamespaceDecl>(d2); ns2 && ns2->getName() == "dsl" &&
                                                                  inVocab(ns2))
            dsl = ns2;
    if (!dsl)
      return;
    for (auto *d : dsl->decls()) {
      if (auto *ct = llvm::dyn_cast<clang::ClassTemplateDecl>(d)) {
        if (ct->getName() == "SNAC")
          snac_ = ct->getCanonicalDecl();
        else if (ct->getName() == "compose")
          compose_ = ct->getCanonicalDecl();
      } else if (auto *rd = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
        llvm::StringRef n = rd->getName();
        const clang::Decl *c = rd->getCanonicalDecl();
        if (n == "Policy")
          policy_ = rd->getDefinition();
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) \
        else if (n == #dsl) atoms_[c] = AtomKind::Name;
#include "purlin/vocabulary.def"
      }
    }
  }

  bool inVocab(const clang::Decl *d) const {
    clang::PresumedLoc p = sm_.getPresumedLoc(sm_.getExpansionLoc(d->getLocation()));
    return p.isValid() && llvm::StringRef(p.getFilename()) == kVocabPath;
  }

  /// The main file and files it includes; not the vocabulary, not system
  /// headers, not Clang's <built-in> buffers.
  bool inUserFile(const clang::Decl *d) const {
    clang::SourceLocation at = sm_.getExpansionLoc(d->getLocation());
    if (at.isInvalid() || sm_.isInSystemHeader(at))
      return false;
    clang::PresumedLoc p = sm_.getPresumedLoc(at);
    if (p.isInvalid())
      return false;
    llvm::StringRef f = p.getFilename();
    return f != kVocabPath && !(f.size() > 0 && f.front() == '<');
  }

  Location locOf(clang::SourceLocation at) const {
    Location loc;
    clang::PresumedLoc p = sm_.getPresumedLoc(sm_.getExpansionLoc(at));
    if (p.isValid()) {
      loc.file = p.getFilename();
      loc.line = p.getLine();
      loc.col = p.getColumn();
    }
    return loc;
  }

  void record(const clang::CXXRecordDecl *rd) {
    if (!policy_ || !rd->isThisDeclarationADefinition() || rd->isInvalidDecl())
      return;
    if (rd->isDerivedFrom(policy_))
      module_.declaredPolicies.push_back(rd->getQualifiedNameAsString());
  }

  void alias(const clang::TypedefNameDecl *td) {
    if (td->isInvalidDecl())
      return;
    clang::TypeLoc tl;
    if (auto *tsi = td->getTypeSourceInfo())
      tl = tsi->getTypeLoc();
    auto c = build(td->getUnderlyingType(), tl, td->getQualifiedNameAsString(), locOf(td->getLocation()));
    if (!c)
      return;
    named_[td->getCanonicalDecl()] = c;
    module_.collectives.push_back(c);
  }

  /// Strips sugar that carries no meaning for us from a TypeLoc.
  static clang::TypeLoc peel(clang::TypeLoc tl) {
    while (!tl.isNull()) {
      if (auto e = tl.getAs<clang::ElaboratedTypeLoc>())
        tl = e.getNamedTypeLoc();
      else if (auto q = tl.getAs<clang::QualifiedTypeLoc>())
        tl = q.getUnqualifiedLoc();
      else if (auto p = tl.getAs<clang::ParenTypeLoc>())
        tl = p.getInnerLoc();
      else
        break;
    }
    return tl;
  }

  /// The Collective that type `t` denotes, or null if it is not a
  /// collective. `name`/`loc` name a new node; an alias already recorded
  /// as a collective is returned as that (shared) node when `name` is empty.
  std::shared_ptr<Collective> build(clang::QualType t, clang::TypeLoc tl, const std::string &name,
                                    const Location &loc) {
    // Desugar step by step, stopping at an alias we already know.
    for (unsigned guard = 0; guard < 100000; ++guard) {
      const clang::Type *ty = t.getTypePtrOrNull();
      if (!ty)
        return nullptr;
      if (auto *tt = llvm::dyn_cast<clang::TypedefType>(ty)) {
        auto it = named_.find(tt->getDecl()->getCanonicalDecl());
        if (it != named_.end()) {
          if (name.empty())
            return it->second;
          // An alias of an alias: a new node with the same meaning.
          auto c = std::make_shared<Collective>(*it->second);
          c->name = name;
          c->loc = loc;
          return c;
        }
      }
      if (auto *ts = llvm::dyn_cast<clang::TemplateSpecializationType>(ty)) {
        if (!ts->isTypeAlias()) {
          auto *decl = ts->getTemplateName().getAsTemplateDecl();
          if (decl && decl->getCanonicalDecl() == snac_)
            return leaf(t, name, loc);
          if (decl && decl->getCanonicalDecl() == compose_)
            return composition(ts, peel(tl), name, loc);
          return nullptr;
        }
      }
      clang::QualType next = t.getSingleStepDesugaredType(ctx_);
      if (next == t)
        break;
      // Elaborated names (Clang >= 16 wraps every spelled name in one) and
      // parentheses keep the spelling's TypeLoc; other sugar loses it.
      tl = llvm::isa<clang::ElaboratedType, clang::ParenType>(ty) ? peel(tl) : clang::TypeLoc();
      t = next;
    }
    // No sugar left: a specialization reached through decltype, templates...
    if (auto *rt = t->getAs<clang::RecordType>())
      if (auto *sd = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rt->getDecl())) {
        auto *decl = sd->getSpecializedTemplate()->getCanonicalDecl();
        if (decl == snac_)
          return leaf(t, name, loc);
        if (decl == compose_)
          return canonicalComposition(sd, name, loc);
      }
    return nullptr;
  }

  std::string spell(clang::QualType t) const { return cut(t.getAsString(*printing_)); }

  template <class E>
  bool enumArg(const clang::TemplateArgument &a, int count, E &out) {
    if (a.getKind() != clang::TemplateArgument::Integral)
      return false;
    int64_t v = a.getAsIntegral().getExtValue();
    if (v < 0 || v >= count)
      return false;
    out = static_cast<E>(v);
    return true;
  }

  /// SNAC<A, P, op, in, out[, root]>: values from the canonical specialization.
  std::shared_ptr<Collective> leaf(clang::QualType t, const std::string &name, const Location &loc) {
    auto *rt = t->getAs<clang::RecordType>();
    auto *sd = rt ? llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rt->getDecl()) : nullptr;
    if (!sd)
      return nullptr;
    const clang::TemplateArgumentList &args = sd->getTemplateArgs();
    if (args.size() != 6)
      return nullptr;
    auto c = std::make_shared<Collective>();
    c->loc = loc;
    // Atom position.
    clang::QualType atomT = args[0].getKind() == clang::TemplateArgument::Type ? args[0].getAsType() : clang::QualType();
    const clang::CXXRecordDecl *atomD = atomT.isNull() ? nullptr : atomT->getAsCXXRecordDecl();
    auto ai = atomD ? atoms_.find(atomD->getCanonicalDecl()) : atoms_.end();
    if (ai != atoms_.end())
      c->atom = ai->second;
    else
      c->unknownAtom = atomT.isNull() ? "?" : spell(atomT);
    // Policy position.
    clang::QualType polT = args[1].getKind() == clang::TemplateArgument::Type ? args[1].getAsType() : clang::QualType();
    const clang::CXXRecordDecl *polD = polT.isNull() ? nullptr : polT->getAsCXXRecordDecl();
    if (polD && policy_ && polD->getCanonicalDecl() == policy_->getCanonicalDecl())
      c->policy = "Policy";
    else if (polD && policy_ && polD->hasDefinition() && polD->isDerivedFrom(policy_))
      c->policy = polD->getQualifiedNameAsString();
    else
      c->unknownPolicy = polT.isNull() ? "?" : spell(polT);
    if (!enumArg(args[2], 2, c->op))
      c->invalidArgument = "consume op (expected copy or reduce)";
    else if (!enumArg(args[3], 6, c->in))
      c->invalidArgument = "input layout";
    else if (!enumArg(args[4], 6, c->out))
      c->invalidArgument = "output layout";
    else if (!enumArg(args[5], 3, c->root))
      c->invalidArgument = "root (expected Root::none, Root::producer or Root::consumer)";
    c->name = name.empty() ? leafSpelling(*c) : name;
    return c;
  }

  static std::string leafSpelling(const Collective &c) {
    std::string s = std::string("SNAC<") + (c.unknownAtom.empty() ? toString(c.atom) : c.unknownAtom) +
                    ", " + (c.unknownPolicy.empty() ? c.policy : c.unknownPolicy) + ", " +
                    toString(c.op) + ", " + toString(c.in) + ", " + toString(c.out);
    if (c.root != Root::None)
      s += std::string(", Root::") + toString(c.root);
    return cut(s + ">");
  }

  /// Derives op/in/out/root of a compose from its children (AST.h).
  static void derive(Collective &c) {
    const Collective &f = *c.children[0], &g = *c.children[1];
    c.atom = f.atom;
    c.policy = f.policy;
    c.op = f.op;
    c.in = f.in;
    c.out = g.out;
    c.root = f.root != Root::None ? f.root : g.root;
  }

  std::shared_ptr<Collective> child(clang::QualType t, clang::TypeLoc tl, const Location &where) {
    if (auto c = build(t, tl, "", where))
      return c;
    auto bad = std::make_shared<Collective>();
    bad->name = spell(t);
    bad->loc = where;
    bad->notACollective = true;
    return bad;
  }

  std::shared_ptr<Collective> composition(const clang::TemplateSpecializationType *ts, clang::TypeLoc tl,
                                          const std::string &name, const Location &loc) {
    auto args = ts->template_arguments();
    if (args.size() != 2)
      return nullptr;
    auto stl = tl.isNull() ? clang::TemplateSpecializationTypeLoc() : tl.getAs<clang::TemplateSpecializationTypeLoc>();
    auto c = std::make_shared<Collective>();
    c->isCompose = true;
    c->loc = loc;
    for (unsigned i = 0; i < 2; ++i) {
      clang::TypeLoc argTl;
      Location where = loc;
      if (!stl.isNull() && i < stl.getNumArgs()) {
        clang::TemplateArgumentLoc al = stl.getArgLoc(i);
        where = locOf(al.getLocation());
        if (al.getArgument().getKind() == clang::TemplateArgument::Type && al.getTypeSourceInfo())
          argTl = al.getTypeSourceInfo()->getTypeLoc();
      }
      if (args[i].getKind() != clang::TemplateArgument::Type)
        return nullptr;
      c->children.push_back(child(args[i].getAsType(), argTl, where));
    }
    return finishCompose(c, name);
  }

  std::shared_ptr<Collective> canonicalComposition(const clang::ClassTemplateSpecializationDecl *sd,
                                                   const std::string &name, const Location &loc) {
    const auto *key = sd->getCanonicalDecl();
    if (name.empty())
      if (auto it = anonymous_.find(key); it != anonymous_.end())
        return it->second;
    const clang::TemplateArgumentList &args = sd->getTemplateArgs();
    if (args.size() != 2 || args[0].getKind() != clang::TemplateArgument::Type ||
        args[1].getKind() != clang::TemplateArgument::Type)
      return nullptr;
    auto c = std::make_shared<Collective>();
    c->isCompose = true;
    c->loc = loc;
    for (unsigned i = 0; i < 2; ++i)
      c->children.push_back(child(args[i].getAsType(), clang::TypeLoc(), loc));
    auto r = finishCompose(c, name);
    if (name.empty())
      anonymous_[key] = r;
    return r;
  }

  std::shared_ptr<Collective> finishCompose(std::shared_ptr<Collective> c, const std::string &name) {
    if (!c->children[0]->notACollective && !c->children[1]->notACollective)
      derive(*c);
    c->name = name.empty() ? cut("compose<" + c->children[0]->name + ", " + c->children[1]->name + ">") : name;
    return c;
  }

  clang::ASTContext &ctx_;
  const clang::SourceManager &sm_;
  Module &module_;
  std::unique_ptr<clang::PrintingPolicy> printing_;
  const clang::ClassTemplateDecl *snac_ = nullptr;
  const clang::ClassTemplateDecl *compose_ = nullptr;
  const clang::CXXRecordDecl *policy_ = nullptr;
  std::unordered_map<const clang::Decl *, AtomKind> atoms_;
  std::unordered_map<const clang::Decl *, std::shared_ptr<Collective>> named_;
  std::unordered_map<const clang::Decl *, std::shared_ptr<Collective>> anonymous_;
};

std::vector<std::string> clangArgs(const std::string &path, const ParseOptions &opts) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  std::vector<std::string> args = {"-xc++", "-std=c++20", "-fsyntax-only", "-ferror-limit=20",
                                   "-fbracket-depth=256", "-ftemplate-depth=256",
                                   "-resource-dir=" PURLIN_CLANG_RESOURCE_DIR,
                                   "-I", kVocabDir, "-I", dir.empty() ? "." : dir,
                                   "-include", kVocabPath};
  args.insert(args.end(), opts.clangArgs.begin(), opts.clangArgs.end());
  return args;
}

/// Clang bounds (), [] and {} nesting (-fbracket-depth) but not template
/// argument lists or chains of prefix operators and casts; its parser
/// recurses once per level. Before running Clang, scan the main file's raw
/// tokens: `<` nesting deeper than kMaxAngleDepth (`<` opens, `>`/`>>`
/// close) or more than kMaxStatementTokens tokens between two `;`, `{` or
/// `}` is rejected with a diagnostic (both reset at those tokens, so
/// comparisons cannot accumulate across statements).
constexpr unsigned kMaxAngleDepth = 256;
constexpr unsigned kMaxStatementTokens = 65536;

Location offsetToLoc(const std::string &path, const std::string &code, size_t offset) {
  Location loc{path, 1, 1};
  for (size_t i = 0; i < offset && i < code.size(); ++i)
    if (code[i] == '\n') {
      ++loc.line;
      loc.col = 1;
    } else {
      ++loc.col;
    }
  return loc;
}

bool checkNesting(const std::string &path, const std::string &code, Diagnostics &diags) {
  clang::LangOptions lang;
  lang.CPlusPlus = lang.CPlusPlus11 = lang.CPlusPlus14 = lang.CPlusPlus17 = lang.CPlusPlus20 = true;
  clang::Lexer lex(clang::SourceLocation(), lang, code.data(), code.data(), code.data() + code.size());
  clang::Token tok;
  unsigned depth = 0, tokens = 0;
  while (!lex.LexFromRawLexer(tok)) {
    // Raw lexer with a null file location: a location's encoding is its offset.
    size_t offset = tok.getLocation().getRawEncoding();
    if (++tokens > kMaxStatementTokens) {
      diags.report(DiagKind::StatementTooLong, offsetToLoc(path, code, offset), kMaxStatementTokens);
      return false;
    }
    switch (tok.getKind()) {
    case clang::tok::less:
      if (++depth > kMaxAngleDepth) {
        diags.report(DiagKind::NestingTooDeep, offsetToLoc(path, code, offset), kMaxAngleDepth);
        return false;
      }
      break;
    case clang::tok::greater: depth = depth > 0 ? depth - 1 : 0; break;
    case clang::tok::greatergreater: depth = depth > 1 ? depth - 2 : 0; break;
    case clang::tok::semi:
    case clang::tok::l_brace:
    case clang::tok::r_brace: depth = tokens = 0; break;
    default: break;
    }
  }
  return true;
}

} // namespace

std::optional<Module> parseBuffer(const std::string &path, const std::string &code, Diagnostics &diags,
                                  const ParseOptions &opts) {
  diags.setSource(path, code);
  if (!checkNesting(path, code, diags))
    return std::nullopt;
  ClangDiagnosticPrinter printer(diags);
  clang::tooling::FileContentMappings vocab = {{kVocabPath, vocabularyHeader()}};
  std::unique_ptr<clang::ASTUnit> unit = clang::tooling::buildASTFromCodeWithArgs(
      code, clangArgs(path, opts), path, "purlinc", std::make_shared<clang::PCHContainerOperations>(),
      clang::tooling::getClangStripDependencyFileAdjuster(), vocab, &printer);
  if (!unit) {
    diags.report(DiagKind::ClangFailed, Location{}, path);
    return std::nullopt;
  }
  if (printer.getNumErrors() > 0 || unit->getDiagnostics().hasErrorOccurred())
    return std::nullopt;
  Module module;
  module.file = path;
  Collector(unit->getASTContext(), module).run();
  return module;
}

std::optional<Module> parseFile(const std::string &path, Diagnostics &diags, const ParseOptions &opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    diags.report(DiagKind::CannotRead, Location{}, path, "is a directory");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.report(DiagKind::CannotRead, Location{}, path, std::strerror(errno));
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parseBuffer(path, ss.str(), diags, opts);
}

} // namespace purlin
