/* prof_convert() and prof_merge() from C: a StepStats written byte by byte, converted in
 * timeline.py's layout and in tfprof's (to Chrome JSON and back to TensorFlow's formats), with
 * and without a session running; every error path returns its code and names the file.
 *
 * Usage: tfprof_convert_test OUTPUT_DIR */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tfprof/tfprof.h>

static int g_failures = 0;

#define CHECK(condition)                                                                        \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      ++g_failures;                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__,        \
              #condition, prof_last_error());                                                   \
    }                                                                                           \
  } while (0)

/* Appends a length-delimited field (lengths here stay below 128: one-byte varints). */
static size_t Field(unsigned char *out, size_t at, int field, const void *bytes, size_t length) {
  out[at++] = (unsigned char)(field << 3 | 2);
  out[at++] = (unsigned char)length;
  memcpy(out + at, bytes, length);
  return at + length;
}

static size_t VarintField(unsigned char *out, size_t at, int field, unsigned value) {
  out[at++] = (unsigned char)(field << 3);
  while (value >= 0x80) {
    out[at++] = (unsigned char)(value | 0x80);
    value >>= 7;
  }
  out[at++] = (unsigned char)value;
  return at;
}

/* A StepStats with one device and the op "m = MatMul(x, y)" at 1000000 us, 25 us long. */
static size_t WriteStepStats(unsigned char *out) {
  unsigned char node[96];
  size_t node_size = Field(node, 0, 1, "m", 1);
  node_size = VarintField(node, node_size, 2, 1000000);
  node_size = VarintField(node, node_size, 5, 25);
  node_size = Field(node, node_size, 8, "m = MatMul(x, y)", 16);
  unsigned char device[160];
  size_t device_size = Field(device, 0, 1, "/device:CPU:0", 13);
  device_size = Field(device, device_size, 2, node, node_size);
  return Field(out, 0, 1, device, device_size);
}

static void WriteBytes(const char *path, const void *bytes, size_t size) {
  FILE *file = fopen(path, "wb");
  if (file == NULL) return;
  fwrite(bytes, 1, size, file);
  fclose(file);
}

static char *ReadText(const char *path) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) return NULL;
  char *text = calloc(1, 1 << 16);
  if (text != NULL) fread(text, 1, (1 << 16) - 1, file);
  fclose(file);
  return text;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  mkdir(argv[1], 0755);
  char input[4096], output[4096], empty[4096], session_out[4096];
  snprintf(input, sizeof input, "%s/convert_input.pb", argv[1]);
  snprintf(output, sizeof output, "%s/convert_output.json", argv[1]);
  snprintf(empty, sizeof empty, "%s/convert_empty.pb", argv[1]);
  snprintf(session_out, sizeof session_out, "%s/convert_session.json", argv[1]);
  unsigned char stats[256];
  WriteBytes(input, stats, WriteStepStats(stats));
  WriteBytes(empty, "", 0);

  /* No session running. */
  CHECK(prof_convert(input, output, "layout=timeline,rows=lanes") == PROF_OK);
  CHECK(strcmp(prof_last_error(), "") == 0);
  char *text = ReadText(output);
  CHECK(text != NULL);
  if (text != NULL) {
    CHECK(strstr(text, "\"name\":\"MatMul\",\"pid\":1,\"tid\":0,\"ts\":1000000,\"dur\":25,"
                       "\"args\":{\"name\":\"m\",\"op\":\"MatMul\",\"input0\":\"x\",\"input1\":\"y\"}") != NULL);
    CHECK(strstr(text, "\"/device:CPU:0 Compute\"") != NULL);
    free(text);
  }

  /* tfprof's layout (the default): the op as a host span named "m:MatMul" at its wall-clock
   * time; then that Chrome JSON back into a TFRecord and into Chrome JSON again. */
  char tfprof_json[4096], tfrecord[4096], again[4096];
  snprintf(tfprof_json, sizeof tfprof_json, "%s/convert_tfprof.json", argv[1]);
  snprintf(tfrecord, sizeof tfrecord, "%s/convert_tfprof.tfrecord", argv[1]);
  snprintf(again, sizeof again, "%s/convert_again.json", argv[1]);
  CHECK(prof_convert(input, tfprof_json, NULL) == PROF_OK);
  CHECK(prof_convert(tfprof_json, tfrecord, NULL) == PROF_OK);
  CHECK(prof_convert(tfrecord, again, "format=json") == PROF_OK);
  text = ReadText(again);
  CHECK(text != NULL);
  if (text != NULL) {
    CHECK(strstr(text, "\"cat\":\"user_annotation\",\"name\":\"m:MatMul\"") != NULL);
    CHECK(strstr(text, "\"format\":\"TFRecord of RunMetadata\"") != NULL);
    free(text);
  }

  /* While a session runs, which goes on untouched. */
  CHECK(prof_start(NULL) == PROF_OK);
  prof_span_begin("while_converting");
  const char *inputs[] = {input, input};
  CHECK(prof_merge(inputs, 2, output, "layout=timeline") == PROF_OK);
  prof_span_end();
  CHECK(prof_is_running() == 1);
  CHECK(prof_stop() == PROF_OK);
  CHECK(prof_export(session_out) == PROF_OK);
  text = ReadText(output);
  if (text != NULL) {
    CHECK(strstr(text, "\"convert_input.pb: /device:CPU:0 Compute\"") == NULL); /* same name twice */
    CHECK(strstr(text, "/convert_input.pb: /device:CPU:0 Compute\"") != NULL);  /* so full paths */
    free(text);
  }

  /* An input that ends early (a writer killed mid-write): converted to its last whole step, a
   * success whose warning prof_last_error() holds. */
  {
    char cut[4096];
    snprintf(cut, sizeof cut, "%s/convert_cut.json", argv[1]);
    const char *text = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,"
                       "\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"na";
    WriteBytes(cut, text, strlen(text));
    CHECK(prof_convert(cut, output, NULL) == PROF_OK);
    CHECK(strstr(prof_last_error(), "prof_convert: warning: ") == prof_last_error());
    CHECK(strstr(prof_last_error(), "convert_cut.json: the file ends at byte 82 (inside an event") !=
          NULL);
    CHECK(strstr(prof_last_error(), "kept 1 events (the file has no steps)") != NULL);
    CHECK(prof_convert(input, output, NULL) == PROF_OK);
    CHECK(strcmp(prof_last_error(), "") == 0); /* a whole input leaves no message */
  }

  /* Errors. */
  CHECK(prof_convert(NULL, output, NULL) == PROF_EINVAL);
  CHECK(strstr(prof_last_error(), "prof_convert: input_path is NULL or empty") != NULL);
  CHECK(prof_merge(NULL, 1, output, NULL) == PROF_EINVAL);
  const char *with_null[] = {input, NULL};
  CHECK(prof_merge(with_null, 2, output, NULL) == PROF_EINVAL);
  CHECK(strstr(prof_last_error(), "input_paths[1] is NULL or empty") != NULL);
  CHECK(prof_convert(input, output, "show_memory=perhaps") == PROF_EOPTION);
  CHECK(strstr(prof_last_error(), "option 'show_memory' at offset 0: 'perhaps' is not one of") != NULL);
  CHECK(prof_convert(input, "out.txt", NULL) == PROF_EFORMAT);
  CHECK(prof_convert(empty, output, NULL) == PROF_EDATA);
  CHECK(strstr(prof_last_error(), "convert_empty.pb: not a trace: the file is empty") != NULL);
  CHECK(strcmp(prof_strerror(PROF_EDATA), "an input file is damaged or in no supported format") == 0);
  char missing[4096];
  snprintf(missing, sizeof missing, "%s/no_such_input.pb", argv[1]);
  CHECK(prof_convert(missing, output, NULL) == PROF_EIO);
  CHECK(strstr(prof_last_error(), "no_such_input.pb: no such file or directory") != NULL);
  CHECK(prof_convert(input, output, "rows=lanes") == PROF_EOPTION); /* needs layout=timeline */
  CHECK(strstr(prof_last_error(), "need layout=timeline") != NULL);
  CHECK(prof_convert(input, input, NULL) == PROF_EINVAL);
  CHECK(strstr(prof_last_error(), "refusing to overwrite") != NULL);

  if (g_failures == 0) printf("convert C ABI: all checks passed\n");
  return g_failures == 0 ? 0 : 1;
}
