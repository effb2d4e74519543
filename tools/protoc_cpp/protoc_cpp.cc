// protoc with only its C++ generator, built from the pinned protobuf source (cmake/Protobuf.cmake)
// on machines whose protoc is missing or of another version: generated code must match the
// protobuf runtime it is compiled against, version for version. Takes protoc's usual arguments
// (-I, --cpp_out, --version).
#include <google/protobuf/compiler/command_line_interface.h>
#include <google/protobuf/compiler/cpp/generator.h>

int main(int argc, char *argv[]) {
  google::protobuf::compiler::CommandLineInterface cli;
  google::protobuf::compiler::cpp::CppGenerator cpp_generator;
  cli.RegisterGenerator("--cpp_out", "--cpp_opt", &cpp_generator, "Generate C++ header and source.");
  return cli.Run(argc, argv);
}
