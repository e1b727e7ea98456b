import os
from pathlib import Path

import pytest

from vswbench.run.procs import Identity
from vswbench.run.state import RecordedProcess
from vswbench.run.state import RunState
from vswbench.run.state import process_start_time
from vswbench.testbed.leftovers import describe_skips
from vswbench.testbed.leftovers import select_leftovers

SAME = Identity(True, True, "")
GONE = Identity(False, False, "no longer running")


def state(run_id, owner_alive, processes=(), temp_dirs=()):
    pid = os.getpid()
    start = process_start_time(pid) if owner_alive else -1  # -1: not this process any more
    s = RunState(run_id, pid, start, 0.0, temp_dirs=list(temp_dirs), processes=list(processes))
    s.path = Path(f"/run/vswbench/{run_id}.json")
    return s


def select(namespaces=(), links=(), temp_dirs=(), states=(), busy=None, alive=lambda p: True,
           force=False, prefix="vsb", **more):
    busy = busy or {}
    return select_leftovers(namespaces=namespaces, links=links, temp_dirs=temp_dirs,
                            states=states, pids_in_namespace=lambda ns: busy.get(ns, []),
                            identify_process=lambda p: SAME if alive(p) else GONE,
                            force=force, prefix=prefix, **more)


def test_only_names_a_run_makes():
    plan = select(namespaces=["vsb1234a", "blue", "xvsb1234", "vsbother", "vsb-user", "vsbuser",
                              "vsbzzzz-notmine", "vsbabcdtester", "vsbabcd-x"],
                  links=["eth0", "vsb1234a0", "lo", "docker0", "vsb-user0"])
    assert plan.namespaces == ["vsb1234a", "vsbabcdtester"]
    assert plan.links == ["vsb1234a0"]
    # a bare vsb prefix is not a run's name: left alone, and said so
    assert {"vsbother", "vsb-user", "vsbuser", "vsbzzzz-notmine", "vsbabcd-x",
            "vsb-user0"} <= set(plan.not_ours)
    assert any("vsb-user " in note for note in describe_skips(plan))


def test_live_run_is_protected():
    live = state("vsbaaaa", owner_alive=True, temp_dirs=["/tmp/vsb-vsbaaaa-x1abcdef"])
    plan = select(namespaces=["vsbaaaaa", "vsbbbbba"],
                  temp_dirs=[Path("/tmp/vsb-vsbaaaa-x1abcdef"), Path("/tmp/vsb-vsbbbbb-y2abcdef")],
                  states=[live])
    assert plan.namespaces == ["vsbbbbba"]
    assert plan.temp_dirs == [Path("/tmp/vsb-vsbbbbb-y2abcdef")]
    assert plan.live_runs == ["vsbaaaa"] and plan.state_files == []


def test_dead_run_processes_and_state_file():
    procs = [RecordedProcess(111, 5, ["engine", "sink"]),
             RecordedProcess(222, 6, ["engine", "gen"])]
    dead = state("vsbcccc", owner_alive=False, processes=procs)
    plan = select(namespaces=["vsbcccca"], states=[dead], busy={"vsbcccca": [111]},
                  alive=lambda p: p.pid == 111)
    assert [p.pid for _, p in plan.processes] == [111]
    assert plan.namespaces == ["vsbcccca"]  # its only process is one we will stop
    assert plan.state_files == [Path("/run/vswbench/vsbcccc.json")]


def test_busy_namespace_skipped_unless_forced():
    plan = select(namespaces=["vsbdddda"], busy={"vsbdddda": [4242]})
    assert plan.namespaces == [] and plan.busy_namespaces == {"vsbdddda": [4242]}
    forced = select(namespaces=["vsbdddda"], busy={"vsbdddda": [4242]}, force=True)
    assert forced.namespaces == ["vsbdddda"] and forced.processes == []


def test_nothing_to_do():
    assert select(namespaces=["red"], links=["eth0"]).empty


def test_prefix_narrows_to_one_run():
    dead_mine = state("vsb1111", owner_alive=False)
    dead_other = state("vsb2222", owner_alive=False)
    plan = select(namespaces=["vsb1111a", "vsb2222a", "vsb-dev-a"], links=["vsb1111a0", "vsbx"],
                  temp_dirs=[Path("/tmp/vsb-vsb1111-a1b2c3d4"), Path("/tmp/vsb-vsb2222-a1b2c3d4")],
                  states=[dead_mine, dead_other], prefix="vsb1111")
    assert plan.namespaces == ["vsb1111a"] and plan.links == ["vsb1111a0"]
    assert plan.temp_dirs == [Path("/tmp/vsb-vsb1111-a1b2c3d4")]
    assert plan.state_files == [Path("/run/vswbench/vsb1111.json")]


def test_default_prefix_takes_every_stray_run_temp_dir_and_nothing_else():
    plan = select(temp_dirs=[Path("/tmp/vsb-other"), Path("/tmp/vsb-vsb1111-a1b2c3d4"),
                             Path("/tmp/vsb-vsbcafe-mydata"), Path("/tmp/vsb-vsb1111-ovs-abcd_f12"),
                             Path("/tmp/vsb-vsb2222-lab-0a1b2c3d"), Path("/tmp/vsb-vsb2222-lab-d1")])
    assert plan.temp_dirs == [Path("/tmp/vsb-vsb1111-a1b2c3d4"),
                              Path("/tmp/vsb-vsb1111-ovs-abcd_f12"),
                              Path("/tmp/vsb-vsb2222-lab-0a1b2c3d")]


def test_prefix_must_be_ours():
    with pytest.raises(ValueError):
        select(namespaces=["red"], prefix="red")


def test_dpdk_leftovers_only_ours_and_unheld(tmp_path):
    from vswbench.testbed.leftovers import hugetlbfs_mounts
    from vswbench.testbed.leftovers import paths_in_use

    files = [Path("/var/run/dpdk/vsbdpdk123"), Path("/var/run/dpdk/rte"),
             Path("/dev/hugepages/vsb1a2btpmap_0"), Path("/var/run/dpdk/vsb1a2btp"),
             Path("/var/run/dpdk/vsbdpdk1-notmine"), Path("/dev/hugepages/vsbdpdk7map_3"),
             Path("/var/run/dpdk/vsb1a2bnotmine"), Path("/dev/hugepages/vsbdpdk7map_3x")]
    held = {Path("/var/run/dpdk/vsb1a2btp")}
    plan = select(dpdk_files=files, path_in_use=lambda p: p in held)
    assert plan.dpdk_files == [files[0], files[2], files[5]] and not plan.empty
    narrowed = select(dpdk_files=files, prefix="vsb1a2b")
    assert narrowed.dpdk_files == [files[2], files[3]]
    mounts = "none /dev/hugepages hugetlbfs rw 0 0\nproc /proc proc rw 0 0\n"
    assert hugetlbfs_mounts(mounts) == [Path("/dev/hugepages")]
    # this very test file is open by nobody, but our own cwd's files are mapped: a smoke test
    in_use = paths_in_use()
    assert not in_use(tmp_path / "nothing-here")


def test_only_directories_named_by_a_run_id_are_project_temp_dirs(tmp_path):
    """/tmp/vsb-anything of a user (a CI clone was one) is not ours: only vsb-<run id>-...."""
    from vswbench.testbed.leftovers import project_temp_dirs

    for name in ("vsb-vsb1a2b-x1abcdef", "vsb-vsb1a2b-ovs-y1234567", "vsb-ci", "vsb-wt",
                 "vsb1a2b-bpf-z1234567", "vsb-vsbcafe-mydata", "vsb-vsb1a2b-x1abcdefg",
                 "vsb-vsb1a2b-ovs-y1234567-more"):
        (tmp_path / name).mkdir()
    (tmp_path / "vsb-vsbffff-file0000").write_text("")
    (tmp_path / "vsb-vsbeeee-link0000").symlink_to(tmp_path / "vsb-ci")
    assert [p.name for p in project_temp_dirs(tmp_path)] == ["vsb-vsb1a2b-ovs-y1234567",
                                                            "vsb-vsb1a2b-x1abcdef"]


def test_a_recorded_process_is_named_by_its_program():
    from vswbench.testbed.leftovers import command_name

    assert command_name(["ip", "netns", "exec", "vsbabcdsw", "/usr/sbin/ovs-vswitchd", "x"]) == \
        "ovs-vswitchd"
    assert command_name(["vswbench-engine", "sink"]) == "vswbench-engine"
    assert command_name([]) == "?"


def test_names_that_merely_look_like_a_runs_are_left_alone():
    """D5: a run id followed by something no run makes (`babe`, `notmine`, `eth0`) is not ours."""
    decoys = ["vsbcafebabe", "vsb12abnotmine", "vsbbeefeth0", "vsbbeefeth1", "vsb1234tester0",
              "vsb1234sw-x", "vsb1234a\n", "vsbABCDsw"]
    plan = select(namespaces=decoys + ["vsb1234tester"], links=decoys + ["vsb1234tp0"])
    assert plan.namespaces == ["vsb1234tester"] and plan.links == ["vsb1234tp0"]
    assert set(decoys) <= set(plan.not_ours)


def test_recorded_temp_dirs_anywhere_but_only_the_runs_own():
    """TMPDIR=X, kill -9, clean: X/vsb-<run id>-... is found through the state file; a recorded
    path that is not named by that run id (a planted `/home`) or not a directory of ours is not."""
    good = "/scratch/x/vsb-vsbcccc-a1b2c3d4"
    dead = state("vsbcccc", owner_alive=False,
                 temp_dirs=[good, "/home", "/scratch/vsb-vsbdddd-a1b2c3d4",
                            "/scratch/vsb-vsbcccc-mydata", "/scratch/vsb-vsbcccc-linkedxx"])
    plan = select(states=[dead], own_dir=lambda p: not p.name.endswith("linkedxx"))
    assert plan.temp_dirs == [Path(good)]


def test_a_recorded_process_that_cannot_be_confirmed_is_not_signalled():
    """S4: a live PID whose record has no start time (or another executable) is left alone."""
    procs = [RecordedProcess(111, None, ["vswbench-engine", "sink"]),
             RecordedProcess(222, 6, ["vswbench-engine", "gen"], exe="/usr/bin/vswbench-engine")]
    dead = state("vsbeeee", owner_alive=False, processes=procs)
    plan = select_leftovers(namespaces=(), links=(), temp_dirs=(), states=[dead],
                            pids_in_namespace=lambda ns: [],
                            identify_process=lambda p: Identity(False, True, f"why {p.pid}"))
    assert plan.processes == []
    assert [(r, p.pid, why) for r, p, why in plan.unconfirmed] == [("vsbeeee", 111, "why 111"),
                                                                  ("vsbeeee", 222, "why 222")]
    notes = describe_skips(plan)
    assert any("process 111 of run vsbeeee" in n and "not signalled: why 111" in n for n in notes)


def test_state_file_problems_are_reported():
    plan = select(problems=["skipped state file /x/vsb0000.json: damaged: not JSON"])
    assert "skipped state file /x/vsb0000.json: damaged: not JSON" in describe_skips(plan)
