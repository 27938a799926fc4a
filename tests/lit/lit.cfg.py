# @file lit.cfg.py
# @brief lit configuration of purlinc's FileCheck tests. Every folder below
# tests/lit is searched (front end tests here, IR tests in ir/, ...).
# Parameters (CTest passes them): purlin_bin_dir (where purlinc is),
# purlin_obj_dir (where lit writes %t files).
import os
import lit.formats

config.name = 'purlin'
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = ['.pl', '.test']
config.excludes = ['Inputs', 'CMakeLists.txt', 'lit.cfg.py']
config.test_source_root = os.path.dirname(__file__)

repo = os.path.abspath(os.path.join(config.test_source_root, '..', '..'))
bin_dir = lit_config.params.get('purlin_bin_dir', os.path.join(repo, 'build', 'bin'))
obj_dir = lit_config.params.get('purlin_obj_dir', os.path.join(bin_dir, '..', 'tests', 'lit'))
config.test_exec_root = obj_dir

purlinc = os.path.join(bin_dir, 'purlinc')
if not os.path.exists(purlinc):
    lit_config.fatal('purlinc not found at %s (pass --param purlin_bin_dir=DIR)' % purlinc)

llvm_bin = '/usr/lib/llvm-14/bin'
config.environment['PATH'] = os.pathsep.join([bin_dir, llvm_bin, config.environment.get('PATH', os.environ.get('PATH', ''))])

config.substitutions.append(('%purlinc', purlinc))
config.substitutions.append(('%examples', os.path.join(repo, 'dsl_examples')))
config.substitutions.append(('%vocab_include', os.path.join(repo, 'compiler', 'include')))
config.substitutions.append(('%table_include', os.path.join(repo, 'runtime', 'include')))
config.substitutions.append(('%inputs', os.path.join(config.test_source_root, 'Inputs')))
config.substitutions.append(('%python', 'python3'))
config.substitutions.append(('%cxx', os.environ.get('CXX', 'c++')))
