#!/bin/sh
# make_seeds.sh DIR: fill DIR with seed inputs for fuzz_parse: every graph of
# the corpus (tests/corpus/graphs, tests/corpus/cases/*/graph.ir, examples)
# plus a few hand-written graphs for what the corpus lacks (groups, every
# attribute kind, unusual types).
set -eu
out=${1:?usage: make_seeds.sh DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
n=0
for f in "$root"/tests/corpus/graphs/*.ir "$root"/tests/corpus/cases/*/graph.ir "$root"/examples/*.ir; do
  [ -f "$f" ] || continue
  rel=${f#"$root"/}
  cp "$f" "$out/$(printf '%s' "$rel" | tr '/' '_')"
  n=$((n + 1))
done

cat > "$out/seed_groups.ir" <<'IR'
graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %c : bool):
  %g : Float(2, 3) = prim::TensorExprGroup_0(%x.1)
  %h : Float(2, 3) = prim::If(%c) # corpus.py:5:4
    block0():
      %d : Float(2, 3) = prim::DifferentiableGraph_1(%g)
      -> (%d)
    block1():
      -> (%g)
  %k : Float(2, 3) = fusebox::FusionGroup_2[symbolic_shape_inputs=[-2]](%h, %g)
  return (%k)
with prim::TensorExprGroup_0 = graph(%0 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : Float(2, 3) = aten::relu(%0)
  %2 : Float(2, 3) = prim::FusionGroup_0(%1)
  return (%2)
with prim::FusionGroup_0 = graph(%0 : Float(2, 3)):
  %1 : Float(2, 3) = aten::neg(%0)
  return (%1)
with prim::DifferentiableGraph_1 = graph(%0 : Float(2, 3)):
  %1 : Float(2, 3) = aten::sigmoid(%0)
  return (%1)
with fusebox::FusionGroup_2 = graph(%0 : Float(2, 3),
      %1 : Float(2, 3)):
  %2 : Float(2, 3) = aten::mul(%0, %1)
  return (%2)
IR

cat > "$out/seed_attrs.ir" <<'IR'
graph(%x : Tensor,
      %n : int):
  %i : int = prim::Constant[value=-3]()
  %f : float = prim::Constant[value=1.0000000000000001e-05]()
  %fb : float = prim::Constant[value=10000000000]()
  %fn : float = prim::Constant[value=-inf]()
  %s : str = prim::Constant[value="say \"hi\"\n\t\\ \001"]()
  %dev : Device = prim::Constant[value="cuda:0"]()
  %none : NoneType = prim::Constant()
  %is : int[] = prim::Constant[value=[1, -2]]()
  %fs : float[] = prim::Constant[value=[1., 2.5]]()
  %ss : str[] = prim::Constant[value=["a", "b"]]()
  %e : int[] = prim::Constant[value=annotate(List[int], [])]()
  %ef : float[] = prim::Constant[value=annotate(List[str], ["x"])]()
  %t0 : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
  %t1 : Double(requires_grad=0, device=cpu) = prim::Constant[value={2.5}]()
  %t2 : Tensor = prim::Constant[value=<Tensor>]()
  %t3 : Long(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2  3 [ CPULongType{3} ]]()
  %t4 : Float(0, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=[ CPUFloatType{0} ]]()
  %p : Tensor = prim::profile[profiled_type=Float(2, strides=[1], requires_grad=0, device=cpu), seen_none=0](%x)
  %q : Float(2), %ok : bool = prim::TypeCheck[types=[Float(2, requires_grad=0, device=cpu), Tensor]](%x)
  %y : Tensor, %z : int = prim::Loop(%n, %ok, %x, %i)
    block0(%k : int, %a : Tensor, %b : int):
      %c : int = aten::add(%b, %k)
       = prim::RaiseException(%s, %none) # corpus.py:9:4
      -> (%ok, %a, %c)
  return (%y, %z)
IR

cat > "$out/seed_types.ir" <<'IR'
graph(%a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %b : Long(*, 4),
      %c : FloatTensor(requires_grad=0),
      %d : Double(SS(-2), 3)[Undefined],
      %e : Tensor?[],
      %f : int[]?,
      %g : (Tensor, int),
      %h : (),
      %i : Dict(str, Tensor),
      %j : Future[int],
      %k : Union(int, float),
      %l : __torch__.foo.Bar,
      %m : NamedTuple(a : int, b : Tensor),
      %o : Enum<__torch__.Color>,
      %p : Scalar):
  return (%a)
IR
n=$((n + 3))
echo "make_seeds: $n seeds in $out"
