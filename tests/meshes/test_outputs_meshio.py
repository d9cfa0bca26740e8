#!/usr/bin/env python3
"""pbdlab's output files read by real clients.

Usage: test_outputs_meshio.py PBDLAB

Writes .vtu (binary = appended raw zlib, base64, ascii) and .msh files through the built
`pbdlab` (`pbdlab mesh --out` for every element type, and a tiny `pbdlab run` with
"vtu": "every_step" in each format) and reads them back:

- with meshio (Debian's python3-meshio): cell types, node counts, every element's volume
  positive (computed from the nodes in the reader's order, so a wrong node order fails) and
  summing to the box's volume, high-order nodes where VTK puts them, point data present, the
  points at rest and "displacement" = the prescribed motion;
- the .pvd collection parsed as XML: one entry per step with its time, every file present;
- with VTK's own XML reader (python3-vtk9, the reader ParaView uses), if installed: the same
  points, cell types and arrays as meshio, "displacement" the active vectors, and vtkWarpVector
  (Warp By Vector) at scale 1 giving rest + displacement;
- with the `gmsh` binary, if installed: it opens the .msh without an error and keeps the
  volume's physical group;
- with ParaView's `pvpython`, if installed: the .pvd is a time series and Warp By Vector on
  the last step gives the deformed bounds.

Exit code 77 (ctest SKIP_RETURN_CODE) when meshio is missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import numpy as np
    import meshio
except ImportError as error:  # pragma: no cover
    print(f"SKIP: meshio is not installed ({error}); install the Debian package python3-meshio")
    sys.exit(77)

PBDLAB = sys.argv[1]
failures = []
checks = [0]


def check(condition, message):
    checks[0] += 1
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def run(*args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        print(result.stdout, result.stderr)
        raise SystemExit(f"command failed ({result.returncode}): {' '.join(args)}")
    return result


def read(path, label):
    """meshio.read, a reader's exception counted as a failed check (None)."""
    try:
        return meshio.read(path)
    except Exception as error:  # noqa: BLE001 - any reader error is the finding
        check(False, f"{label}: meshio cannot read {os.path.basename(path)}: {type(error).__name__}: {error}")
        return None


def tet_volumes(p, cells):
    a, b, c, d = (p[cells[:, i]] for i in range(4))
    return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0


# Tet decompositions of the linear cells in meshio's node order (VTK's, except the wedge,
# which meshio turns into Gmsh's order: triangle (0,1,2) with its normal towards (3,4,5)).
SPLITS = {
    "tetra": [(0, 1, 2, 3)],
    "tetra10": [(0, 1, 2, 3)],  # straight-sided: the corners' tet
    "VTK_LAGRANGE_TETRAHEDRON": [(0, 1, 2, 3)],
    "hexahedron": [(0, 1, 2, 6), (0, 2, 3, 6), (0, 3, 7, 6), (0, 7, 4, 6), (0, 4, 5, 6), (0, 5, 1, 6)],
    "wedge": [(0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5)],
    "pyramid": [(0, 1, 2, 4), (0, 2, 3, 4)],
}
# Reference cells in the same orders, to check the splits themselves.
REFERENCE = {
    "hexahedron": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], 1.0),
    "wedge": ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1]], 0.5),
    "pyramid": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1]], 1.0 / 3.0),
}
for name, (points, volume) in REFERENCE.items():
    p = np.array(points, dtype=float)
    parts = [tet_volumes(p, np.array([split])) for split in SPLITS[name]]
    assert all(v[0] > 0 for v in parts) and abs(sum(v[0] for v in parts) - volume) < 1e-14, name


def element_volumes(points, cell_type, cells):
    if cell_type == "triangle":  # area in the xy plane, counter-clockwise positive
        a, b, c = (points[cells[:, i]] for i in range(3))
        return 0.5 * np.cross(b[:, :2] - a[:, :2], c[:, :2] - a[:, :2])
    parts = [tet_volumes(points, cells[:, list(split)]) for split in SPLITS[cell_type]]
    check(all((v > 0).all() for v in parts), f"{cell_type}: a sub-tet with non-positive volume (node order?)")
    return sum(parts)


def check_high_order_nodes(points, cell_type, cells):
    """VTK's node positions: tet10 edge midpoints, tet20 edge thirds and face centroids."""
    if cell_type not in ("tetra10", "VTK_LAGRANGE_TETRAHEDRON"):
        return
    corner = [points[cells[:, i]] for i in range(4)]
    edges = [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]
    expected = []
    if cell_type == "tetra10":
        expected = [(corner[a] + corner[b]) / 2 for a, b in edges]
    elif cell_type == "VTK_LAGRANGE_TETRAHEDRON":
        for a, b in edges:
            expected += [corner[a] + (corner[b] - corner[a]) / 3, corner[a] + 2 * (corner[b] - corner[a]) / 3]
        expected += [(corner[a] + corner[b] + corner[c]) / 3 for a, b, c in [(0, 1, 3), (1, 2, 3), (0, 2, 3), (0, 1, 2)]]
    for k, e in enumerate(expected):
        check(np.allclose(points[cells[:, 4 + k]], e, atol=1e-12), f"{cell_type}: VTK node {4 + k} is misplaced")


BOX = {"type": "box", "size": [4, 1, 1], "cells": [4, 2, 2]}
MESHES = [
    (dict(BOX, family="five_tet"), "tetra", 4, 4.0),
    (dict(BOX, family="five_tet", order=2), "tetra10", 10, 4.0),
    (dict(BOX, family="five_tet", order=3), "VTK_LAGRANGE_TETRAHEDRON", 20, 4.0),
    (dict(BOX, family="hex"), "hexahedron", 8, 4.0),
    (dict(BOX, family="prism"), "wedge", 6, 4.0),
    (dict(BOX, family="pyramid"), "pyramid", 5, 4.0),
    ({"type": "rectangle", "size": [4, 1], "cells": [4, 2]}, "triangle", 3, 4.0),
]
MSH_TYPES = {"VTK_LAGRANGE_TETRAHEDRON": "tetra20"}  # meshio's name for Gmsh's type 29


def summary_json(recipe):
    return json.loads(run(PBDLAB, "mesh", json.dumps(recipe), "--json").stdout)


def check_mesh_files(tmp):
    for recipe, cell_type, per_cell, volume in MESHES:
        label = f"{cell_type} {json.dumps(recipe)}"
        vtu, msh = os.path.join(tmp, "mesh.vtu"), os.path.join(tmp, "mesh.msh")
        run(PBDLAB, "mesh", json.dumps(recipe), "--out", vtu)
        run(PBDLAB, "mesh", json.dumps(recipe), "--out", msh)
        with open(vtu, "rb") as f:
            head = f.read(400)
        check(b'compressor="vtkZLibDataCompressor"' in head and b'header_type="UInt64"' in head,
              f"{label}: .vtu is not zlib-compressed with UInt64 headers")

        m = read(vtu, label)
        g = read(msh, label)
        if m is None or g is None:
            continue
        check([c.type for c in m.cells] == [cell_type], f"{label}: .vtu cell types {[c.type for c in m.cells]}")
        cells = m.cells[0].data
        check(cells.shape[1] == per_cell, f"{label}: {cells.shape[1]} nodes per cell, expected {per_cell}")
        v = element_volumes(m.points, cell_type, cells)
        check((v > 0).all(), f"{label}: .vtu has {(v <= 0).sum()} non-positive elements")
        check(abs(v.sum() - volume) < 1e-10, f"{label}: .vtu volume {v.sum()}, expected {volume}")
        check_high_order_nodes(m.points, cell_type, cells)
        check("displacement" in m.point_data and np.all(m.point_data["displacement"] == 0),
              f"{label}: .vtu of a mesh: displacement missing or not zero")
        check_with_vtk(vtu, label, m, volume=volume)

        types = [c.type for c in g.cells]
        msh_type = MSH_TYPES.get(cell_type, cell_type)
        check(msh_type in types, f"{label}: .msh cell types {types}, expected {msh_type}")
        if msh_type in types:
            block = [c for c in g.cells if c.type == msh_type][0].data
            check(len(block) == len(cells), f"{label}: .msh has {len(block)} elements, .vtu {len(cells)}")
            check(len(g.points) == len(m.points), f"{label}: .msh has {len(g.points)} nodes, .vtu {len(m.points)}")
            if msh_type == cell_type:  # the .msh in meshio's order: the same volumes
                vm = element_volumes(g.points, cell_type, block)
                check(abs(vm.sum() - volume) < 1e-10 and (vm > 0).all(), f"{label}: .msh volumes")
        check("all" in g.cell_sets and sum(len(c) for c in g.cell_sets["all"]) == len(cells),
              f"{label}: .msh has no physical group \"all\" holding the mesh (cell sets {sorted(g.cell_sets)})")
        if shutil.which("gmsh"):
            check_with_gmsh(msh, label, msh_type, len(cells))


def check_with_gmsh(msh, label, msh_type, elements):
    """The gmsh binary opens the file and saves it again. Without "Save all", Gmsh saves only
    the elements of physical groups: the mesh survives only in its group "all"."""
    out = msh + ".gmsh.msh"
    result = subprocess.run(["gmsh", msh, "-0", "-format", "msh41", "-o", out], capture_output=True, text=True)
    log = result.stdout + result.stderr
    check(result.returncode == 0 and "Error" not in log, f"{label}: gmsh failed on the .msh: {log[-2000:]}")
    if check(os.path.exists(out), f"{label}: gmsh wrote nothing"):
        again = read(out, label + " (saved by gmsh)")
        if again is None:
            return
        n = sum(len(c.data) for c in again.cells if c.type == msh_type)
        check(n == elements, f"{label}: gmsh saved {n} of the {elements} elements")
        check("all" in again.cell_sets, f"{label}: gmsh lost the mesh's physical group ({sorted(again.cell_sets)})")


SCENE = {
    "name": "outputs",
    "mesh": {"type": "box", "family": "five_tet", "size": [2, 1, 1], "cells": [2, 1, 1]},
    "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3,
                 "lame_mapping": "matched", "density": 1000},
    "gravity": [0, 0, 0],
    "dirichlet": [{"node_set": "x-min"},
                  {"node_set": "x-max", "motion": [{"type": "translate", "by": [0.3, 0, 0], "t_start": 0, "t_end": 1}]}],
    "time": {"integrator": "quasistatic", "dt": 0.25, "steps": 4},
    "solver": {"name": "newton", "max_iterations": 50, "target_relative_residual": 1e-8},
    "output": {"vtu": "every_step"},
}


def check_run(tmp):
    arrays = {}
    for fmt in ["binary", "base64", "ascii"]:
        scene = dict(SCENE, output={"vtu": "every_step", "vtu_format": fmt})
        scene_path = os.path.join(tmp, f"scene_{fmt}.json")
        with open(scene_path, "w") as f:
            json.dump(scene, f)
        out = os.path.join(tmp, f"run_{fmt}")
        run(PBDLAB, "run", scene_path, "--out", out)
        check(not [f for f in os.listdir(out) if ".tmp" in f], f"{fmt}: temporary files left in {out}")

        # The collection: one DataSet per step, its time, every file there.
        pvd = os.path.join(out, "steps.pvd")
        if not check(os.path.exists(pvd), f"{fmt}: no steps.pvd"):
            continue
        root = ET.parse(pvd).getroot()
        check(root.tag == "VTKFile" and root.get("type") == "Collection", f"{fmt}: steps.pvd is not a VTK collection")
        sets = root.findall("./Collection/DataSet")
        check(len(sets) == 4, f"{fmt}: steps.pvd lists {len(sets)} datasets, expected 4")
        times = [float(s.get("timestep")) for s in sets]
        check(np.allclose(times, [0.25, 0.5, 0.75, 1.0], atol=1e-12), f"{fmt}: steps.pvd times {times}")
        for s in sets:
            check(os.path.exists(os.path.join(out, s.get("file"))), f"{fmt}: steps.pvd names a missing {s.get('file')}")

        # Each step: the rest points, the displacement of the prescribed motion.
        rest = None
        for k, s in enumerate(sets):
            m = read(os.path.join(out, s.get("file")), f"{fmt} step {k + 1}")
            if m is None:
                continue
            if fmt == "ascii":
                check(b'format="ascii"' in open(os.path.join(out, s.get("file")), "rb").read(), "ascii: not ascii")
            if rest is None:
                rest = m.points
            check(np.array_equal(m.points, rest), f"{fmt} step {k + 1}: the points moved (must stay at rest)")
            v = element_volumes(m.points, "tetra", m.cells[0].data)
            check(len(m.cells[0].data) == 10 and abs(v.sum() - 2.0) < 1e-12, f"{fmt} step {k + 1}: rest volume {v.sum()}")
            u = m.point_data.get("displacement")
            if not check(u is not None and u.shape == (len(rest), 3), f"{fmt} step {k + 1}: no displacement"):
                continue
            x_max = np.isclose(rest[:, 0], 2.0)
            x_min = np.isclose(rest[:, 0], 0.0)
            check(np.allclose(u[x_max], [0.3 * times[k], 0, 0], atol=1e-12), f"{fmt} step {k + 1}: x-max displacement")
            check(np.allclose(u[x_min], 0, atol=1e-12), f"{fmt} step {k + 1}: x-min displacement")
            deformed = element_volumes(rest + u, "tetra", m.cells[0].data)
            check((deformed > 0).all(), f"{fmt} step {k + 1}: rest + displacement inverts an element")
            check_with_vtk(os.path.join(out, s.get("file")), f"{fmt} step {k + 1}", m, warp=rest + u)
            arrays.setdefault(fmt, []).append((m.points, u))
    if len(arrays) == 3:  # every format holds the same numbers (ascii with 17 digits: exactly)
        for fmt in ["base64", "ascii"]:
            for (p0, u0), (p1, u1) in zip(arrays["binary"], arrays[fmt]):
                check(np.array_equal(p0, p1) and np.array_equal(u0, u1), f"{fmt}: differs from binary")
    return os.path.join(tmp, "run_binary")


def check_mixed_run(tmp):
    """A problem whose bodies have different element types (scenes/mixed_tet_hex_blocks.json: a
    tet4 block bound to a hex8 block): final.vtu holds both cell types in one file."""
    scene = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenes", "mixed_tet_hex_blocks.json")
    out = os.path.join(tmp, "run_mixed")
    run(PBDLAB, "run", scene, "--out", out)
    path = os.path.join(out, "final.vtu")
    m = read(path, "mixed")
    if m is None:
        return
    counts = {c.type: len(c.data) for c in m.cells}
    check(counts == {"tetra": 320, "hexahedron": 64}, f"mixed: cells {counts}, expected 320 tetra and 64 hexahedron")
    check(len(m.points) == 250, f"mixed: {len(m.points)} points, expected 250 (125 per body)")
    for c in m.cells:
        if c.type in ("tetra", "hexahedron"):
            v = element_volumes(m.points, c.type, c.data)
            check(abs(v.sum() - 1.0) < 1e-12, f"mixed: the {c.type} cells' rest volume {v.sum()}, expected 1")
    u = m.point_data.get("displacement")
    check(u is not None and u.shape == (250, 3) and u[:, 0].max() > 1e-3, "mixed: no stretching displacement")
    with open(os.path.join(out, "summary.json")) as f:
        mesh = json.load(f)["mesh"]
    check(mesh.get("elements_per_type") == {"tet4": 320, "hex8": 64} and mesh.get("element_type") == "tet4+hex8",
          f"mixed: summary.json mesh entry {mesh}")
    check_with_vtk(path, "mixed", m)


def check_triangle_runs(tmp):
    """Runs of triangle bodies (tests/apps/body_kind_scenes): a plane-strain beam in z = 0 and a
    cloth hanging in the xz plane, written every step. meshio and VTK read VTK triangle cells with
    the rest area (4 m^2, 1 m^2), the plane strain displacement stays in its plane, the cloth moves
    out of its own, and ParaView plays the cloth's steps.pvd with Warp By Vector."""
    scenes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apps", "body_kind_scenes")
    cloth_dir = None
    for kind, area, nodes in [("plane_strain", 4.0, 27), ("cloth", 1.0, 49)]:
        with open(os.path.join(scenes, kind + ".json")) as f:
            scene = json.load(f)
        scene["output"]["vtu"] = "every_step"
        scene_path = os.path.join(tmp, f"scene_{kind}.json")
        with open(scene_path, "w") as f:
            json.dump(scene, f)
        out = os.path.join(tmp, "run_" + kind)
        run(PBDLAB, "run", scene_path, "--out", out)
        path = os.path.join(out, "step_0001.vtu")
        m = read(path, kind)
        if m is None:
            continue
        types = [c.type for c in m.cells]
        check(types == ["triangle"], f"{kind}: cells {types}, expected one block of triangles")
        check(len(m.points) == nodes, f"{kind}: {len(m.points)} points, expected {nodes}")
        p = m.points
        a, b, c = (p[m.cells[0].data[:, i]] for i in range(3))
        total = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum()
        check(abs(total - area) < 1e-12, f"{kind}: rest area {total}, expected {area}")
        u = m.point_data.get("displacement")
        if check(u is not None and u.shape == (nodes, 3), f"{kind}: no displacement of shape ({nodes}, 3)"):
            if kind == "plane_strain":
                check(np.abs(u[:, 2]).max() == 0.0 and u[:, 1].min() < -1e-6,
                      f"plane_strain: displacement z {np.abs(u[:, 2]).max()}, y {u[:, 1].min()}")
            else:
                check(u[:, 1].min() < -1e-6, "cloth: it does not fall out of its plane")
        check_with_vtk(path, kind, m, warp=p + u if u is not None else None)
        if kind == "cloth":
            cloth_dir = out
    return cloth_dir


def vtk_module():
    try:
        import vtk  # Debian's python3-vtk9: VTK's own XML reader, the one ParaView uses
        from vtk.util.numpy_support import vtk_to_numpy
        return vtk, vtk_to_numpy
    except ImportError:
        return None, None


VTK_TYPES = {"tetra": 10, "tetra10": 24, "VTK_LAGRANGE_TETRAHEDRON": 71, "hexahedron": 12, "wedge": 13,
             "pyramid": 14, "triangle": 5}


def check_with_vtk(path, label, m, volume=None, warp=None):
    """VTK's vtkXMLUnstructuredGridReader reads what meshio read, bit for bit; with `warp`, the
    deformed points expected from vtkWarpVector (ParaView's Warp By Vector) at scale 1."""
    vtk, to_numpy = vtk_module()
    if vtk is None:
        return
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    grid = reader.GetOutput()
    num_cells = sum(len(c.data) for c in m.cells)  # every block (bodies of several element types)
    if not check(grid.GetNumberOfPoints() == len(m.points) and grid.GetNumberOfCells() == num_cells,
                 f"{label}: VTK read {grid.GetNumberOfPoints()} points, {grid.GetNumberOfCells()} cells"):
        return
    check(np.array_equal(to_numpy(grid.GetPoints().GetData()), m.points), f"{label}: VTK's points differ from meshio's")
    cell_types = {grid.GetCellType(i) for i in range(grid.GetNumberOfCells())}
    check(cell_types == {VTK_TYPES[c.type] for c in m.cells}, f"{label}: VTK cell types {cell_types}")
    vectors = grid.GetPointData().GetVectors()
    check(vectors is not None and vectors.GetName() == "displacement", f"{label}: VTK's active vectors are not 'displacement'")
    check(np.array_equal(to_numpy(grid.GetPointData().GetArray("displacement")), m.point_data["displacement"]),
          f"{label}: VTK's displacement differs from meshio's")
    if volume is not None:  # VTK's own cell measures (vtkCellSizeFilter): a mirrored cell is negative
        sizes = vtk.vtkCellSizeFilter()
        sizes.SetInputConnection(reader.GetOutputPort())
        sizes.Update()
        name = "Area" if m.cells[0].type == "triangle" else "Volume"
        v = to_numpy(sizes.GetOutput().GetCellData().GetArray(name))
        check((v > 0).all() and abs(v.sum() - volume) < 1e-10,
              f"{label}: VTK's cell {name.lower()}s: min {v.min()}, sum {v.sum()}, expected all > 0 summing to {volume}")
    if warp is not None:
        w = vtk.vtkWarpVector()  # no array chosen: the active vectors, as ParaView does
        w.SetInputConnection(reader.GetOutputPort())
        w.SetScaleFactor(1.0)
        w.Update()
        check(np.allclose(to_numpy(w.GetOutput().GetPoints().GetData()), warp, rtol=0, atol=1e-14),
              f"{label}: Warp By Vector does not give the deformed points")


PVPYTHON_SCRIPT = r"""
import sys
from paraview.simple import OpenDataFile, WarpByVector, UpdatePipeline
reader = OpenDataFile(sys.argv[1])
times = list(reader.TimestepValues)
assert len(times) == int(sys.argv[2]), times
warp = WarpByVector(Input=reader)
warp.Vectors = ["POINTS", "displacement"]
warp.ScaleFactor = 1.0
UpdatePipeline(time=times[-1], proxy=warp)
bounds = warp.GetDataInformation().GetBounds()
print("BOUNDS", *bounds)
"""


def check_with_paraview(run_dir, steps=4, x_bounds=(0.0, 2.3), label="pvpython"):
    pvpython = shutil.which("pvpython")
    if not pvpython:
        print("SKIP (part): pvpython not installed; ParaView check not run")
        return
    script = os.path.join(run_dir, "check.py")
    with open(script, "w") as f:
        f.write(PVPYTHON_SCRIPT)
    result = subprocess.run([pvpython, script, os.path.join(run_dir, "steps.pvd"), str(steps)], capture_output=True,
                            text=True)
    line = [l for l in result.stdout.splitlines() if l.startswith("BOUNDS")]
    if check(result.returncode == 0 and line, f"pvpython failed: {result.stdout[-2000:]} {result.stderr[-2000:]}"):
        b = [float(t) for t in line[0].split()[1:]]
        check(abs(b[0] - x_bounds[0]) < 1e-9 and abs(b[1] - x_bounds[1]) < 1e-9,
              f"{label}: warped x bounds {b[:2]}, expected {list(x_bounds)}")


def main():
    tmp = tempfile.mkdtemp(prefix="pbdlab_outputs_")
    try:
        check_mesh_files(tmp)
        run_dir = check_run(tmp)
        check_mixed_run(tmp)
        check_with_paraview(run_dir)
        cloth_dir = check_triangle_runs(tmp)
        if cloth_dir:  # the cloth's x extent: its clamped edge keeps x in [0, 1]
            check_with_paraview(cloth_dir, steps=2, x_bounds=(0.0, 1.0), label="pvpython (cloth)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    vtk, _ = vtk_module()
    if vtk is None:
        print("SKIP (part): python3-vtk9 not installed; VTK reader check not run")
    print(f"meshio {meshio.__version__}; VTK: {vtk.vtkVersion.GetVTKVersion() if vtk else 'absent'}; "
          f"gmsh binary: {shutil.which('gmsh') or 'absent'}; pvpython: {shutil.which('pvpython') or 'absent'}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print(f"test_outputs_meshio: ok ({checks[0]} checks)")


if __name__ == "__main__":
    main()
