"""No circle between the engine's source files (engine/tools/check_deps.py, also run by
`make -C engine check`): neither in the includes of engine/src nor between its object files' symbols.
The checker itself is tested on constructed circles, so that it can fail."""
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
spec = importlib.util.spec_from_file_location("check_deps", ENGINE / "tools" / "check_deps.py")
check_deps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_deps)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_engine_src_includes_have_no_circle():
    graph = check_deps.include_graph(ENGINE / "src")
    assert "engine.h" in graph and "xdplive/io_xdplive.c" in graph  # it found the tree
    assert check_deps.circles(graph) == []


def test_engine_objects_have_no_symbol_circle():
    # the objects of today's sources only: a build folder keeps those of renamed files
    sources = [c for c in (ENGINE / "src").rglob("*.c") if not c.name.endswith(".bpf.c")]
    built = [ENGINE / "build" / c.relative_to(ENGINE / "src").with_suffix(".o") for c in sources]
    objects = [o for o in built if o.exists()]
    if not objects or shutil.which("nm") is None:
        pytest.skip("engine not built (make -C engine) or no nm")
    graph = check_deps.symbol_graph(objects)
    assert sum(len(e) for e in graph.values()) > 20  # it saw the objects' dependencies
    assert check_deps.circles(graph) == []


def test_include_circle_is_found_and_fails(tmp_path, capsys):
    src = tmp_path / "src"
    write(src / "a.h", '#include "b.h"\n')
    write(src / "sub" / "b.h", '#include "c.h"\n')      # found under src (-Isrc)
    write(src / "c.h", '#include <stdio.h>\n#include "sub/b.h"\n')
    write(src / "main.c", '#include "a.h"\n')
    assert check_deps.main(["--src", str(src)]) == 1
    err = capsys.readouterr().err
    assert "include circle" in err and "c.h -> sub/b.h" in err and "sub/b.h -> c.h" in err
    write(src / "c.h", '#include <stdio.h>\n')
    assert check_deps.main(["--src", str(src)]) == 0


def test_symbol_circle_is_found_and_fails(tmp_path, capsys):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which("nm") is None:
        pytest.skip("no C compiler or nm")
    src = tmp_path / "src"
    files = {"run.c": "int kern_chunk(void);\nvoid trial_warn(void) {}\n"
                      "int gen(void) { return kern_chunk(); }\n",
             "kern.c": "void trial_warn(void);\nint kern_chunk(void) { trial_warn(); return 1; }\n",
             "main.c": "int gen(void);\nint main(void) { return gen(); }\n"}
    objects = []
    for name, text in files.items():
        obj = tmp_path / (name[:-2] + ".o")
        subprocess.run([cc, "-c", "-o", str(obj), str(write(src / name, text))], check=True)
        objects.append(str(obj))
    assert check_deps.main(["--src", str(src), *objects]) == 1
    err = capsys.readouterr().err
    assert "symbol circle" in err and "uses kern_chunk" in err and "uses trial_warn" in err
    assert "main.o" not in err  # main only depends on the circle, it is not in it
    # the cut: trial_warn moves to a third file
    write(src / "kern.c", "int kern_chunk(void) { return 1; }\n")
    subprocess.run([cc, "-c", "-o", str(tmp_path / "kern.o"), str(src / "kern.c")], check=True)
    assert check_deps.main(["--src", str(src), *objects]) == 0
