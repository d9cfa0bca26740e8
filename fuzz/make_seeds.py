#!/usr/bin/python3
"""Seed corpora for the libFuzzer targets of fuzz/ (docs/fuzzing.md).

usage: make_seeds.py SOURCE_DIR OUT_DIR

Writes OUT_DIR/<target>/<name> for every target: the repository's own JSON files (scenes,
validation cases, benchmark tables, the command-line tests' bad scenes), scenes with their
mesh shrunk to a few cells (fuzz_scene skips large meshes), the mesh recipes of every scene
plus one of each type, and small generated .msh (4.1 ASCII and binary, 2.2 ASCII), STL
(ASCII and binary) and .pbdmesh cache entries. Deterministic; no network, no Gmsh.
"""
import glob
import json
import os
import shutil
import struct
import sys


def write(out, target, name, data):
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(folder, name), mode) as f:
        f.write(data)


def shrink_mesh(mesh):
    """The recipe with at most a few cells (same type, family and order)."""
    mesh = dict(mesh)
    t = mesh.get("type")
    if t == "box" and "cells" in mesh:
        mesh["cells"] = [2, 1, 1]
    elif t == "box":
        mesh.update({"family": "five_tet", "cells": [2, 1, 1]})
        mesh.pop("target_size", None)
    elif t == "res_box":
        mesh["nodes_per_side"] = 3
    elif t == "rectangle":
        mesh.pop("target_size", None)
        mesh["cells"] = [2, 2]
    elif t == "bunny_surface":
        mesh["subdivisions"] = 0
    else:
        mesh = {"type": "box", "family": "five_tet", "cells": [2, 1, 1]}
    return mesh


# A unit cube in five tetrahedra (positively oriented), its faces' triangles for node sets.
CUBE = [(x, y, z) for z in (0, 1) for y in (0, 1) for x in (0, 1)]
TETS = [(0, 1, 2, 4), (3, 2, 1, 7), (5, 4, 7, 1), (6, 7, 4, 2), (1, 2, 4, 7)]
FACE_TRIS = [(0, 2, 1), (1, 2, 3), (4, 5, 6), (5, 7, 6)]


def volume(a, b, c, d):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [d[i] - a[i] for i in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])) / 6


def oriented_tets():
    out = []
    for t in TETS:
        a, b, c, d = (CUBE[i] for i in t)
        out.append(t if volume(a, b, c, d) > 0 else (t[0], t[1], t[3], t[2]))
    return out


def msh41_ascii():
    tets = oriented_tets()
    s = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$PhysicalNames", "2", '2 1 "bottom"', '3 2 "all"',
         "$EndPhysicalNames", "$Entities", "0 0 1 1", "1 0 0 0 1 1 0 1 1 0", "1 0 0 0 1 1 1 1 2 0", "$EndEntities",
         "$Nodes", "1 8 1 8", "3 1 0 8"]
    s += [str(i + 1) for i in range(8)]
    s += ["%g %g %g" % p for p in CUBE]
    s += ["$EndNodes", "$Elements", "2 9 1 9", "2 1 2 4"]
    s += ["%d %d %d %d" % ((k + 1,) + tuple(i + 1 for i in t)) for k, t in enumerate(FACE_TRIS)]
    s += ["3 1 4 5"]
    s += ["%d %d %d %d %d" % ((k + 5,) + tuple(i + 1 for i in t)) for k, t in enumerate(tets)]
    s += ["$EndElements", ""]
    return "\n".join(s)


def msh41_binary():
    tets = oriented_tets()
    b = b"$MeshFormat\n4.1 1 8\n" + struct.pack("<i", 1) + b"\n$EndMeshFormat\n"
    b += b'$PhysicalNames\n1\n3 2 "all"\n$EndPhysicalNames\n'
    b += b"$Entities\n" + struct.pack("<4Q", 0, 0, 0, 1)
    b += struct.pack("<i6dQi", 1, 0, 0, 0, 1, 1, 1, 1, 2) + struct.pack("<Q", 0) + b"\n$EndEntities\n"
    b += b"$Nodes\n" + struct.pack("<4Q", 1, 8, 1, 8) + struct.pack("<iiiQ", 3, 1, 0, 8)
    b += struct.pack("<8Q", *range(1, 9)) + b"".join(struct.pack("<3d", *p) for p in CUBE) + b"\n$EndNodes\n"
    b += b"$Elements\n" + struct.pack("<4Q", 1, 5, 1, 5) + struct.pack("<iiiQ", 3, 1, 4, 5)
    b += b"".join(struct.pack("<5Q", k + 1, *(i + 1 for i in t)) for k, t in enumerate(tets)) + b"\n$EndElements\n"
    return b


def msh22_ascii():
    tets = oriented_tets()
    s = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$PhysicalNames", "1", '3 7 "solid"', "$EndPhysicalNames",
         "$Nodes", "8"]
    s += ["%d %g %g %g" % ((i + 1,) + p) for i, p in enumerate(CUBE)]
    s += ["$EndNodes", "$Elements", str(len(FACE_TRIS) + len(tets))]
    s += ["%d 2 2 0 1 %d %d %d" % ((k + 1,) + tuple(i + 1 for i in t)) for k, t in enumerate(FACE_TRIS)]
    s += ["%d 4 2 7 1 %d %d %d %d" % ((k + 5,) + tuple(i + 1 for i in t)) for k, t in enumerate(tets)]
    s += ["$EndElements", ""]
    return "\n".join(s)


TET_SURFACE = [((0, 0, 0), (0, 1, 0), (1, 0, 0)), ((0, 0, 0), (1, 0, 0), (0, 0, 1)),
               ((0, 0, 0), (0, 0, 1), (0, 1, 0)), ((1, 0, 0), (0, 1, 0), (0, 0, 1))]


def stl_ascii(triangles, name="t"):
    s = ["solid " + name]
    for t in triangles:
        s += ["facet normal 0 0 0", " outer loop"] + ["  vertex %r %r %r" % v for v in t] + [" endloop", "endfacet"]
    return "\n".join(s + ["endsolid " + name, ""])


def stl_binary(triangles):
    b = b"pbdlab fuzz seed".ljust(80, b" ") + struct.pack("<I", len(triangles))
    for t in triangles:
        b += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *v) for v in t) + b"\0\0"
    return b


def fnv1a64(data):
    h = 14695981039346656037
    for c in data:
        h ^= c
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def pbdmesh(key, type_name, positions, elements, node_sets):
    """meshes/mesh_cache.cpp serializeMesh, format 1."""
    def text(s):
        s = s.encode()
        return struct.pack("<Q", len(s)) + s
    per = len(elements[0]) if elements else {"tet4": 4, "tri3": 3}[type_name]
    b = b"PBDMESH\0" + struct.pack("<II", 1, 0x01020304) + text(key) + text(type_name) + text("fuzz seed")
    b += struct.pack("<qqq", len(positions), len(elements), per)
    b += b"".join(struct.pack("<3d", *p) for p in positions)
    b += b"".join(struct.pack("<%di" % per, *e) for e in elements)
    b += struct.pack("<Q", len(node_sets))
    for name, nodes in sorted(node_sets.items()):
        b += text(name) + struct.pack("<Q", len(nodes)) + struct.pack("<%di" % len(nodes), *nodes)
    return b + struct.pack("<Q", fnv1a64(b))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    if os.path.isdir(out):
        shutil.rmtree(out)
    scenes = sorted(glob.glob(os.path.join(src, "scenes", "*.json")))
    cases = sorted(glob.glob(os.path.join(src, "validation", "cases", "*.json")))
    tables = sorted(glob.glob(os.path.join(src, "benchmarks", "tables", "*.json")))
    bad = sorted(glob.glob(os.path.join(src, "tests", "apps", "bad_scenes", "*.json")))
    recipes = {}
    for path in scenes + cases + tables + bad:
        with open(path, "rb") as f:
            data = f.read()
        write(out, "json_reader", os.path.basename(os.path.dirname(path)) + "_" + os.path.basename(path), data)
    for path in cases:
        shutil.copy(path, os.path.join(out, "validation_case") if os.path.isdir(os.path.join(out, "validation_case"))
                    else (os.makedirs(os.path.join(out, "validation_case")) or os.path.join(out, "validation_case")))
    for path in tables:
        write(out, "table", os.path.basename(path), open(path).read())
    for path in scenes + bad:
        try:
            scene = json.load(open(path))
        except ValueError:
            write(out, "scene", os.path.basename(path), open(path).read())
            continue
        if isinstance(scene, dict) and isinstance(scene.get("mesh"), dict):
            recipes[json.dumps(scene["mesh"], sort_keys=True)] = scene["mesh"]
            scene["mesh"] = shrink_mesh(scene["mesh"])
            # Short budgets: the scene is only read, never run, but keep it cheap anyway.
        write(out, "scene", os.path.basename(path), json.dumps(scene, indent=1))
    for r in [{"type": "box", "family": f, "cells": [2, 1, 1]} for f in
              ("five_tet", "biased", "gmsh_six", "hex", "prism", "pyramid")] + [
            {"type": "box", "family": "unstructured", "size": [1, 1, 1], "target_size": 0.5, "order": 2},
            {"type": "box", "family": "five_tet", "cells": [2000, 2000, 2000]},
            {"type": "res_box", "nodes_per_side": 4, "order": 3},
            {"type": "rectangle", "embedding": "3d_surface", "plane": "xz", "size": [1, 2], "cells": [3, 2],
             "diagonals": "left"},
            {"type": "rectangle", "size": [1, 1], "target_size": 0.3},
            {"type": "msh", "file": "box.msh"}, {"type": "stl", "file": "tet.stl", "target_size": 0.2,
                                                  "feature_angle": 40, "order": 2},
            {"type": "bunny_surface", "subdivisions": 1}]:
        recipes[json.dumps(r, sort_keys=True)] = r
    for k, key in enumerate(sorted(recipes)):
        write(out, "mesh_recipe", "recipe_%02d.json" % k, json.dumps(recipes[key]))
    write(out, "msh", "cube_41_ascii.msh", msh41_ascii())
    write(out, "msh", "cube_41_binary.msh", msh41_binary())
    write(out, "msh", "cube_22_ascii.msh", msh22_ascii())
    write(out, "stl", "tet_ascii.stl", stl_ascii(TET_SURFACE))
    write(out, "stl", "tet_binary.stl", stl_binary(TET_SURFACE))
    write(out, "stl", "two_solids.stl", stl_ascii(TET_SURFACE[:2], "a") + stl_ascii(TET_SURFACE[2:], "b"))
    tets = [list(t) for t in oriented_tets()]
    faces = {"all": list(range(8)), "z-min": [0, 1, 2, 3], "z-max": [4, 5, 6, 7]}
    # The first byte: odd = the fuzz target rewrites the checksum (fuzz/fuzz_mesh_cache.cpp).
    write(out, "mesh_cache", "cube.pbdmesh", b"\1" + pbdmesh("pbdlab-fuzz-key", "tet4", CUBE, tets, faces))
    write(out, "mesh_cache", "cube_checksum.pbdmesh", b"\0" + pbdmesh("pbdlab-fuzz-key", "tet4", CUBE, tets, faces))
    write(out, "mesh_cache", "triangles.pbdmesh",
          b"\1" + pbdmesh("pbdlab-fuzz-key", "tri3", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)],
                          [[0, 1, 2], [1, 3, 2]], {"all": [0, 1, 2, 3]}))


if __name__ == "__main__":
    main()
