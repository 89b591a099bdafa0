//! The compiled engine's bindings (`hamlet/runtime/native.py` uses them): `GraphKernel` runs one GRETA graph
//! over a partition's matched events; `SetKernel` takes a partition's events whole, applies the local
//! predicates of every graph of a sharable query set and runs them all, sharing the bursts of the Kleene
//! types its queries share in HAMLET's graphlets (`burst.rs`, `graphlet.rs`) and summing each group's windows
//! itself when asked (`sums.rs`); `set.rs` is its run over one partition. `SegmentCosts` weighs the Python
//! shared path's per-partition decision (`segments.rs`).
//!
//! Arithmetic is exact: counts and sums are `num::Num`, i128 while they fit, arbitrary precision beyond. A
//! sum over an attribute that holds floats is kept, as Python keeps it, as a whole number of units, here of
//! 2^-E with E the finest any value of the partition needs (Python: 2^-1074), and scaled to Python's units
//! on the way out. MIN and MAX compare ints and floats together by an order-preserving key
//! (`values::order_key`). A value only Python compares or sums exactly (an int beyond 64 bits, a NaN,
//! a string summed, two different times in one microsecond: `events::event_micros`) makes a graph decline
//! the partition, and the caller runs it on the Python engine.

// mimalloc for the kernel's own allocations (Python's and Arrow's keep theirs): a stream partition's graph,
// vectors and maps are many small short-lived allocations, 16 % of the 1M-event job's engine CPU seconds
// with glibc's malloc (bench/results/job_throughput.md). Its v2 line (the v3 line's per-thread heap slots
// clash with another mimalloc in the process, such as pyarrow's: mimalloc#1327) and thread-local storage
// for a library that is dlopen'ed (the initial-exec model can fail to load: "cannot allocate memory in
// static TLS block").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod burst;
mod columns;
mod crossed;
mod dominance;
mod edges;
mod ends;
mod events;
mod graph;
mod graphlet;
mod joint;
mod negation;
mod num;
mod partials;
mod predicates;
mod reach;
mod segments;
mod set;
mod sums;
mod values;
mod vertical;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyTuple};

use burst::{Decisions, Sharing};
use columns::{Bytes, ColumnSpec, Held};
use edges::{Edge, Expr, Guard};
use ends::EndGroups;
use events::{RawEvent, Reader};
use graph::{
    gcd, positive_of, Graph, Member, Partition, Role, Update, ANY, CONT, COUNT, ENDS, FLOATS, MAX, MIN, NEXT, NONNULL,
    SUM, TRENDS,
};
use negation::Negation;
use partials::{Function, MemberSpec, PartialColumns, StateSpec};
use predicates::Program;
use set::Outcome;
use sums::{GraphSums, Run};
use values::Scale;

/// Names (types, attributes) numbered in the order they are first met, found by hash: a pattern of 30,000
/// types took seconds with a search of the list per name.
#[derive(Default)]
struct Names {
    list: Vec<String>,
    index: rustc_hash::FxHashMap<String, usize>,
}

impl Names {
    /// The number of `name`, added at the end if it is not there yet.
    fn number(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.list.push(name.to_owned());
        self.index.insert(name.to_owned(), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// An edge as Python describes it (`GraphKernel::new`).
type EdgeSpec<'py> = (
    usize,
    usize,
    Vec<Bound<'py, PyAny>>,
    Option<(String, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    Option<(Vec<usize>, u64)>,
);

/// P OR Q, P AND Q as Python describes them (`GraphKernel::new`).
type OperandsSpec = (Vec<u64>, Vec<Vec<usize>>, Vec<(usize, Vec<usize>, u64)>);

/// A negative sub-pattern as Python describes it (`GraphKernel::new`).
type NegationSpec<'py> = (
    Vec<String>,
    Vec<usize>,
    Vec<usize>,
    Vec<(usize, usize)>,
    Vec<EdgeSpec<'py>>,
    usize,
    Option<usize>,
    Option<usize>,
);

/// The edges of a template of `n` positions, their attributes numbered into `attributes`; and per position
/// the edges into it and out of it.
#[allow(clippy::type_complexity)]
fn parse_edges(
    n: usize,
    specs: &[EdgeSpec],
    attributes: &mut Names,
) -> PyResult<(Vec<Edge>, Vec<Vec<usize>>, Vec<Vec<usize>>)> {
    let (mut edges, mut into, mut from) = (Vec::new(), vec![Vec::new(); n], vec![Vec::new(); n]);
    for (source, target, predicates, index, guard) in specs {
        let mut number_of = |a: &str| attributes.number(a);
        let predicates = predicates
            .iter()
            .map(|p| Expr::parse(p, &mut number_of))
            .collect::<PyResult<Vec<_>>>()?;
        let index = match index {
            Some((op, f, g)) => Some((
                predicates::parse_op(op)?,
                Expr::parse(f, &mut number_of)?,
                Expr::parse(g, &mut number_of)?,
            )),
            None => None,
        };
        into[*target].push(edges.len());
        from[*source].push(edges.len());
        let guard = match guard {
            Some((negations, _)) if negations.len() > edges::MAX_GUARD_NEGATIONS => {
                return Err(PyValueError::new_err(format!(
                    "a transition crosses more than {} NOTs",
                    edges::MAX_GUARD_NEGATIONS
                )));
            }
            Some((negations, outcomes)) => Some(Guard {
                negations: negations.clone(),
                outcomes: *outcomes,
            }),
            None => None,
        };
        edges.push(Edge {
            source: *source,
            predicates,
            index,
            guard,
        });
    }
    Ok((edges, into, from))
}

/// The graph of one pattern (`hamlet.runtime.partition.graph_key`) for the queries that share it.
#[pyclass(frozen, module = "hamlet_native")]
struct GraphKernel {
    graph: Graph,
    reader: Reader,        // for `run`: the graph's own types (`Graph::roles` order) and attributes
    roles: Vec<Vec<Role>>, // per type number
    attribute_at: Vec<usize>,
}

#[pymethods]
impl GraphKernel {
    /// `types`: the template's event types by position (a type at several positions on a position
    /// template, dissertation §12: each of its events runs at all of them); `starts`, `ends`: the positions
    /// where trends start and end; `transitions`: (source, target) positions of those
    /// without edge predicates or a guarding NOT; `negations`: every negative sub-pattern, numbered from 1
    /// in this order, as (types, starts, ends, transitions, edges, parent's number (0: this pattern), the
    /// parent's position before and after it, None for a leading or trailing one); `fields`: (kind,
    /// positions whose events update it, attribute or None, scaled) of the aggregate vector, field 0 the
    /// trend count, scaled for a sum kept in units of 2^-1074, kind "ends" a conjunction's class of the
    /// trends ending at those positions; `count_only`: finals are the count itself (CountAlgebra); `members`:
    /// (within, slide, first, last) of each query's windows, in microseconds (`events::micros`); `edges` (and a negation's): per
    /// other transition, (source, target, [expressions], (op, f, g) when they are one comparison
    /// f(x) op g(y), the number of the negation that guards it); `required`: the positions whose type every
    /// trend holds (default: all); `member_ends`: per member, the end position whose trends it counts, on a
    /// merged template (queries that share every position but the end; default: every end, for each);
    /// `operands`: for P OR Q and P AND Q (`automaton.build_states`), (per position the operands it ends as
    /// a bit set, per operand the numbers of its trailing NOTs (none: empty), and (position, negation numbers,
    /// outcomes as a bit set) for each start position that the operands' leading NOTs guard).
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (types, starts, ends, transitions, negations, fields, count_only, members, edges, semantics=0,
                        required=None, member_ends=None, operands=None))]
    fn new(
        py: Python<'_>,
        types: Vec<String>,
        starts: Vec<usize>,
        ends: Vec<usize>,
        transitions: Vec<(usize, usize)>,
        negations: Vec<NegationSpec<'_>>,
        fields: Vec<(String, Vec<usize>, Option<String>, bool)>,
        count_only: bool,
        members: Vec<(i64, i64, i64, i64)>,
        edges: Vec<EdgeSpec<'_>>,
        semantics: u8,
        required: Option<Vec<usize>>,
        member_ends: Option<Vec<usize>>,
        operands: Option<OperandsSpec>,
    ) -> PyResult<Self> {
        let n = types.len();
        let outside = |what: &str, positions: &[usize]| match positions.iter().find(|&&p| p >= n) {
            Some(p) => Err(PyValueError::new_err(format!(
                "{what}: position {p} outside the template's {n}"
            ))),
            None => Ok(()),
        };
        outside("starts", &starts)?;
        outside("ends", &ends)?;
        if starts.is_empty() || ends.is_empty() {
            return Err(PyValueError::new_err("a template needs a start and an end position"));
        }
        let required = required.unwrap_or_else(|| (0..n).collect());
        outside("required", &required)?;
        let mut is_start = vec![false; n];
        let mut is_end = vec![false; n];
        starts.iter().for_each(|&p| is_start[p] = true);
        ends.iter().for_each(|&p| is_end[p] = true);
        let mut at: rustc_hash::FxHashMap<&str, Vec<usize>> = Default::default();
        types
            .iter()
            .enumerate()
            .for_each(|(q, t)| at.entry(t).or_default().push(q));
        let places: Vec<Vec<usize>> = types.iter().map(|t| at[t.as_str()].clone()).collect();
        let mut predecessors = vec![Vec::new(); n];
        let mut successors = vec![Vec::new(); n];
        let mut is_source = vec![false; n];
        for &(source, target) in &transitions {
            predecessors[target].push(source);
            successors[source].push(target);
            is_source[source] = true;
        }
        if semantics > CONT {
            return Err(PyValueError::new_err(format!("unknown semantics {semantics}")));
        }
        let mut kinds = Vec::new();
        let mut updates = vec![Vec::new(); n];
        let mut attributes = Names::default();
        // (the edges' attributes numbered first: graphs with one edge predicate number them alike, whatever
        // they aggregate, and may run as one joint graph: `joint.rs`)
        let (parsed_edges, edges_into, edges_from) = parse_edges(n, &edges, &mut attributes)?;
        for (i, (kind, positions, attribute, scaled)) in fields.iter().enumerate() {
            let kind = match kind.as_str() {
                "trends" => TRENDS,
                "count" => COUNT,
                "sum" => SUM,
                "nonnull" => NONNULL,
                "floats" => FLOATS,
                "min" => MIN,
                "max" => MAX,
                "ends" => ENDS,
                other => return Err(PyValueError::new_err(format!("unknown field kind {other}"))),
            };
            kinds.push(kind);
            outside(&format!("field {i} ({kind_name})", kind_name = fields[i].0), positions)?;
            let a = attribute.as_deref().map_or(usize::MAX, |name| attributes.number(name));
            for &p in positions {
                updates[p].push(Update {
                    field: i,
                    kind,
                    attribute: a,
                    scaled: *scaled,
                });
            }
        }
        let resets: Vec<usize> = (0..kinds.len()).filter(|&f| kinds[f] == ENDS).collect();
        let (end_slot, member_slot) = end_slots(n, &ends, members.len(), member_ends.as_deref())?;
        // (a merged template's ends are one per member, each a single type: no position template)
        let several_ends = ends.len() > 1 && member_ends.is_none();
        let positional = places.iter().any(|p| p.len() > 1) || starts.len() > 1 || several_ends || !resets.is_empty();
        let dominance = semantics == NEXT && places.iter().any(|p| p.len() > 1);
        if dominance && places.iter().any(|p| p.len() > 64) {
            return Err(PyValueError::new_err(
                "NEXT on a position template: at most 64 states of one type",
            ));
        }
        let parsed_edges_empty = parsed_edges.is_empty();
        let mut parsed_negations = Vec::new();
        for (k, (types, starts, ends, transitions, edges, parent, previous, following)) in
            negations.into_iter().enumerate()
        {
            let m = types.len();
            let within = |what: &str, positions: &[usize]| -> PyResult<Vec<bool>> {
                if positions.is_empty() {
                    return Err(PyValueError::new_err(format!("negation {}: no {what} position", k + 1)));
                }
                let mut flags = vec![false; m];
                for &p in positions {
                    *flags.get_mut(p).ok_or_else(|| {
                        PyValueError::new_err(format!("negation {}, {what}: position {p} outside its {m}", k + 1))
                    })? = true;
                }
                Ok(flags)
            };
            let (is_start, is_end) = (within("start", &starts)?, within("end", &ends)?);
            let (edges, edges_into, edges_from) = parse_edges(m, &edges, &mut attributes)?;
            let mut predecessors = vec![Vec::new(); m];
            let mut is_source = vec![false; m];
            for &(source, target) in &transitions {
                predecessors[target].push(source);
                is_source[source] = true;
            }
            parsed_negations.push(Negation {
                types,
                is_start,
                is_end,
                predecessors,
                is_source,
                edges,
                edges_into,
                edges_from,
                parent,
                previous,
                following,
            });
        }
        let top = |f: fn(&Negation) -> bool| -> Vec<usize> {
            (1..=parsed_negations.len())
                .filter(|&k| parsed_negations[k - 1].parent == 0 && f(&parsed_negations[k - 1]))
                .collect()
        };
        let (accepts, operand_trailing, guarded_starts) = operands.unwrap_or_default();
        let mut start_guard: Vec<Option<Guard>> = vec![None; n];
        for (position, negations, outcomes) in guarded_starts {
            *start_guard
                .get_mut(position)
                .ok_or_else(|| PyValueError::new_err(format!("start guard: position {position}")))? =
                Some(Guard { negations, outcomes });
        }
        let accepts = if accepts.is_empty() {
            is_end.iter().map(|&e| e as u64).collect()
        } else {
            accepts
        };
        if accepts.len() != n {
            return Err(PyValueError::new_err("operands: one set of operands per position"));
        }
        // (the NOTs first or last in an operand hold at its own start and end positions only)
        let own: Vec<usize> = start_guard
            .iter()
            .flatten()
            .flat_map(|g| g.negations.iter().copied())
            .chain(operand_trailing.iter().flatten().copied())
            .collect();
        if own.iter().any(|&k| k == 0 || k > parsed_negations.len()) {
            return Err(PyValueError::new_err(
                "operands: a negation number outside the negations",
            ));
        }
        let (leading, trailing) = (top(|n| n.previous.is_none()), top(|n| n.following.is_none()));
        let (leading, trailing): (Vec<usize>, Vec<usize>) = (
            leading.into_iter().filter(|k| !own.contains(k)).collect(),
            trailing.into_iter().filter(|k| !own.contains(k)).collect(),
        );
        // (a position whose events are extended by nothing but the count: no edge, aggregate or reset)
        let plain = |p: usize| {
            edges_into[p].is_empty()
                && edges_from[p].is_empty()
                && updates[p].is_empty()
                && resets.is_empty()
                && semantics == ANY
        };
        let final_only = (0..n)
            .map(|p| is_end[p] && !is_source[p] && plain(p) && trailing.is_empty() && operand_trailing.is_empty())
            .collect();
        let feeds_only = (0..n).map(|p| is_source[p] && !is_end[p] && plain(p)).collect();
        let members: Vec<Member> = members
            .into_iter()
            .map(|(within, slide, first, last)| Member {
                within,
                slide,
                first,
                last,
            })
            .collect();
        let read: rustc_hash::FxHashSet<&String> = parsed_negations.iter().flat_map(|neg| &neg.types).collect();
        let negated = types.iter().map(|t| read.contains(t)).collect();
        let mut graph = Graph {
            negated,
            edges: parsed_edges,
            edges_into,
            edges_from,
            types,
            negations: parsed_negations,
            leading,
            trailing,
            start_guard,
            accepts,
            operand_trailing,
            is_start,
            is_end,
            end_slot,
            member_slot,
            final_only,
            end_groups: EndGroups::default(),
            cyclic: Vec::new(),
            feeds_only,
            places,
            required,
            positional,
            predecessors,
            is_source,
            kinds,
            updates,
            resets,
            attributes: attributes.list,
            count_only,
            semantics,
            successors,
            event_grained: semantics != ANY && !parsed_edges_empty && !dominance,
            dominance,
            windows: members.iter().fold(Vec::new(), |mut distinct, member| {
                if !distinct.contains(member) {
                    distinct.push(*member);
                }
                distinct
            }),
            members,
        };
        graph.end_groups = EndGroups::new(&graph.final_only, &graph.predecessors, &graph.end_slot, graph.slots());
        graph.cyclic = graph.cycles();
        // Read on its own, the graph numbers its types in the order of `Graph::roles`.
        let mut types = Names::default();
        let mut roles: Vec<Vec<Role>> = Vec::new();
        let mut needs: Vec<Vec<usize>> = Vec::new();
        for (t, role) in graph.roles() {
            let t = types.number(&t);
            if t == roles.len() {
                roles.push(Vec::new());
                needs.push(Vec::new());
            }
            roles[t].push(role);
            needs[t].extend(graph.attributes_at(role));
        }
        for need in &mut needs {
            need.sort_unstable();
            need.dedup();
        }
        let reader = Reader::new(py, &types.list, &graph.attributes, needs);
        let attribute_at = (0..graph.attributes.len()).collect();
        Ok(GraphKernel {
            graph,
            reader,
            roles,
            attribute_at,
        })
    }

    /// (member, first window, last window, final) for every run of windows of one class with a final, as
    /// `run_partition` yields them; None when the partition needs the Python engine. `events`: the
    /// partition's events of the graph's types that pass its local predicates, sorted by time.
    /// `substream` (CONT): the time of every event of the partition, of any type, sorted (required then).
    #[pyo3(signature = (events, substream=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        events: &Bound<'py, PyList>,
        substream: Option<Bound<'py, PyList>>,
    ) -> PyResult<Option<Vec<Bound<'py, PyTuple>>>> {
        if self.graph.semantics == CONT && substream.is_none() {
            return Err(PyValueError::new_err(
                "a contiguous graph needs the partition's substream times",
            ));
        }
        let substream = match substream {
            Some(times) => match times.iter().map(|t| events::micros(&t)).collect::<Option<Vec<i64>>>() {
                Some(times) => times,
                None => return Ok(None),
            },
            None => Vec::new(),
        };
        let Some(raw) = self.reader.read(py, events)? else {
            return Ok(None);
        };
        let all: Vec<usize> = (0..raw.len()).collect();
        let Some((runs, scales)) = self.compute(&raw, &all, &self.roles, &self.attribute_at, substream) else {
            return Ok(None);
        };
        self.to_python(py, runs, &scales)?
            .into_iter()
            .map(|(member, first, last, agg)| PyTuple::new(py, [member, first, last, agg]))
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    }
}

type PyRun<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

impl GraphKernel {
    /// The runs of the graph over `raw[indexes]` and what its values were; None: Python's partition.
    fn compute(
        &self,
        raw: &[RawEvent],
        indexes: &[usize],
        roles: &[Vec<Role>],
        attribute_at: &[usize],
        substream: Vec<i64>,
    ) -> Option<(Vec<Run>, Vec<Scale>)> {
        let (events, scales) = self.graph.events(raw, indexes, roles, attribute_at)?;
        let (runs, _) = Partition::new(&self.graph, &events, &scales)?
            .with_substream(substream)
            .run(&[])?;
        Some((runs, scales))
    }

    /// (member, first, last, final) of each run, finals as Python holds them.
    fn to_python<'py>(&self, py: Python<'py>, runs: Vec<Run>, scales: &[Scale]) -> PyResult<Vec<PyRun<'py>>> {
        let mut out = Vec::with_capacity(runs.len());
        for (member, first, last, agg) in runs {
            out.push((
                member.into_pyobject(py)?.into_any(),
                first.into_pyobject(py)?.into_any(),
                last.into_pyobject(py)?.into_any(),
                self.graph.to_python(py, &agg, scales)?,
            ));
        }
        Ok(out)
    }
}

/// Per position its end slot (`Graph::end_slot`), per member the slot it reads: one slot for all `ends`
/// without `member_ends`, else one per end position, in the order of `ends`.
fn end_slots(
    n: usize,
    ends: &[usize],
    members: usize,
    member_ends: Option<&[usize]>,
) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let mut end_slot = vec![usize::MAX; n];
    let Some(member_ends) = member_ends else {
        ends.iter().for_each(|&p| end_slot[p] = 0);
        return Ok((end_slot, vec![0; members]));
    };
    if member_ends.len() != members {
        return Err(PyValueError::new_err("member_ends: one end position per member"));
    }
    ends.iter().enumerate().for_each(|(slot, &p)| end_slot[p] = slot);
    let slot_of = |&p: &usize| ends.iter().position(|&e| e == p);
    let member_slot: Option<Vec<usize>> = member_ends.iter().map(slot_of).collect();
    member_slot
        .ok_or_else(|| PyValueError::new_err("member_ends: a position that is not an end"))
        .map(|m| (end_slot, m))
}

/// The graphs of one sharable query set (`greta.graph_groups`) and the local predicates of the events each
/// reads (one per `partition.match_key`): one call per partition instead of one per graph. Given the
/// partition's groups, it sums the finals of its groups' windows itself (`sums.rs`) until `summed`.
#[pyclass(module = "hamlet_native")]
struct SetKernel {
    graphs: Vec<Py<GraphKernel>>,
    reader: Reader,
    tests: Vec<Vec<Option<Vec<Program>>>>, // per match key, per type number: its predicates (None: not read)
    key_of: Vec<usize>,                    // per graph: its match key
    roles: Vec<Vec<Vec<Role>>>,            // per graph, per type number: its roles there
    attribute_at: Vec<Vec<usize>>,         // per graph: its attribute i is the reader's attribute_at[i]
    grouping_of: Vec<Vec<usize>>,          // per graph, per member: the grouping (GROUP-BY) of its query
    groupings: usize,                      // how many groupings `grouping_of` numbers
    sums: Vec<GraphSums>,                  // per graph
    keys_of_type: Vec<Vec<usize>>,         // per type number: the match keys that read it
    pane: i64,                             // gcd of every window's length and slide
    shared: Vec<bool>,                     // per type number: at a Kleene position of two or more queries
    joints: Vec<joint::JointGroup>,        // graphs that may run as one joint graph (`joint.rs`)
}

#[pymethods]
impl SetKernel {
    /// `keys`: per match key, {type: [predicate programs]} for every type it reads (`predicates.rs`);
    /// `key_of`: per graph, its key; `grouping_of`: per graph, per member, the number of its query's
    /// grouping (the groups `run` gets are one per grouping).
    #[new]
    fn new(
        py: Python<'_>,
        graphs: Vec<Py<GraphKernel>>,
        keys: Vec<Bound<'_, PyDict>>,
        key_of: Vec<usize>,
        grouping_of: Vec<Vec<usize>>,
    ) -> PyResult<Self> {
        if key_of.len() != graphs.len() || key_of.iter().any(|&k| k >= keys.len()) {
            return Err(PyValueError::new_err("key_of: one match key per graph"));
        }
        if graphs.iter().any(|g| g.get().graph.semantics == CONT) {
            // (a contiguous graph reads every event of its partition: `GraphKernel.run`'s substream)
            return Err(PyValueError::new_err("the set kernel takes no contiguous graph"));
        }
        let members = |g: &Py<GraphKernel>| g.get().graph.members.len();
        if grouping_of.len() != graphs.len() || graphs.iter().zip(&grouping_of).any(|(g, m)| members(g) != m.len()) {
            return Err(PyValueError::new_err(
                "grouping_of: one grouping per member of each graph",
            ));
        }
        let mut types = Names::default();
        let mut attributes = Names::default();
        let mut parsed: Vec<Vec<(usize, Vec<Program>)>> = Vec::new();
        for key in &keys {
            let mut per_type = Vec::new();
            for (t, programs) in key.iter() {
                let t = types.number(&t.extract::<String>()?);
                let programs = programs.cast::<PyList>()?;
                let programs = programs
                    .iter()
                    .map(|p| Program::parse(&p, &mut |a: &str| attributes.number(a)))
                    .collect::<PyResult<Vec<_>>>()?;
                per_type.push((t, programs));
            }
            parsed.push(per_type);
        }
        let mut roles = Vec::new();
        let mut attribute_at = Vec::new();
        for g in &graphs {
            let graph = &g.get().graph;
            let by_type: Vec<(usize, Role)> = graph
                .roles()
                .into_iter()
                .map(|(t, role)| (types.number(&t), role))
                .collect();
            roles.push(by_type);
            attribute_at.push(
                graph
                    .attributes
                    .iter()
                    .map(|a| attributes.number(a))
                    .collect::<Vec<_>>(),
            );
        }
        let n = types.list.len();
        let mut needs = vec![Vec::new(); n];
        let tests: Vec<Vec<Option<Vec<Program>>>> = parsed
            .into_iter()
            .map(|per_type| {
                let mut by_number: Vec<Option<Vec<Program>>> = vec![None; n];
                for (t, programs) in per_type {
                    programs.iter().for_each(|p| p.attributes(&mut needs[t]));
                    by_number[t] = Some(programs);
                }
                by_number
            })
            .collect();
        let roles: Vec<Vec<Vec<Role>>> = roles
            .into_iter()
            .enumerate()
            .map(|(g, by_type)| {
                let graph = &graphs[g].get().graph;
                let mut by_number = vec![Vec::new(); n];
                for (t, role) in by_type {
                    needs[t].extend(graph.attributes_at(role).into_iter().map(|a| attribute_at[g][a]));
                    by_number[t].push(role);
                }
                by_number
            })
            .collect();
        for need in &mut needs {
            need.sort_unstable();
            need.dedup();
        }
        let sums = graphs.iter().map(|g| GraphSums::new(&g.get().graph)).collect();
        let pane = graphs.iter().fold(0, |p, g| gcd(p, g.get().graph.pane()));
        let mut kleene_readers = vec![0usize; n];
        for (g, by_type) in roles.iter().enumerate() {
            let graph = &graphs[g].get().graph;
            for (t, role) in by_type.iter().enumerate() {
                if positive_of(role).is_some_and(|p| graph.burst_position(p)) {
                    kleene_readers[t] += graph.members.len();
                }
            }
        }
        let joints = {
            let refs: Vec<&Graph> = graphs.iter().map(|g| &g.get().graph).collect();
            joint::groups(&refs, &attribute_at, &roles)
        };
        let mut keys_of_type: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (key, by_number) in tests.iter().enumerate() {
            for (t, programs) in by_number.iter().enumerate() {
                if programs.is_some() {
                    keys_of_type[t].push(key);
                }
            }
        }
        Ok(SetKernel {
            keys_of_type,
            pane,
            shared: kleene_readers.iter().map(|&k| k > 1).collect(),
            graphs,
            reader: Reader::new(py, &types.list, &attributes.list, needs),
            tests,
            key_of,
            roles,
            attribute_at,
            groupings: grouping_of.iter().flatten().map(|&i| i + 1).max().unwrap_or(0),
            grouping_of,
            sums,
            joints,
        })
    }

    /// (runs, declined, matched, decisions): runs (graph, member, first window, last window, final) of every
    /// graph the kernel computed, the graphs it leaves to Python, how many events some graph's predicates
    /// match, and what sharing did (bursts, shared bursts, graphlets, graphlet-level snapshots, splits,
    /// merges); None when the whole partition is Python's (an event or a predicate value it cannot read
    /// exactly). `events`: one stream partition, sorted by time. With `groups` (per grouping, the number
    /// of the partition's group), the runs are summed here instead, but for those the sums cannot hold
    /// exactly. With `whole`, None unless every graph is computed here (nothing is summed then).
    /// `sharing`: "none" (every event on every graph: GRETA), "static" or "hamlet" (`burst.rs`).
    #[pyo3(signature = (events, groups=None, whole=false, sharing="none"))]
    fn run<'py>(
        &mut self,
        py: Python<'py>,
        events: &Bound<'py, PyList>,
        groups: Option<Vec<usize>>,
        whole: bool,
        sharing: &str,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if groups.as_ref().is_some_and(|groups| groups.len() < self.groupings) {
            return Err(PyValueError::new_err(format!(
                "groups: one per grouping ({})",
                self.groupings
            )));
        }
        let Some(sharing) = Sharing::parse(sharing) else {
            return Err(PyValueError::new_err(format!(
                "sharing: none, static or hamlet, not {sharing:?}"
            )));
        };
        let Some(raw) = self.reader.read(py, events)? else {
            return Ok(None);
        };
        let Some(outcome) = self.compute(&raw, whole, sharing) else {
            return Ok(None);
        };
        let Outcome {
            computed,
            declined,
            matched,
            decisions,
            snapshots,
            ..
        } = outcome;
        let mut runs = Vec::new();
        for (g, found, scales) in computed {
            let kernel = self.graphs[g].get();
            if let Some(groups) = &groups {
                let grouping = &self.grouping_of[g];
                if self.sums[g].add(&kernel.graph, &found, &scales, |m| groups[grouping[m]]) {
                    continue;
                }
            }
            for (member, first, last, agg) in kernel.to_python(py, found, &scales)? {
                runs.push(PyTuple::new(
                    py,
                    [g.into_pyobject(py)?.into_any(), member, first, last, agg],
                )?);
            }
        }
        Ok(Some(PyTuple::new(
            py,
            [
                PyList::new(py, runs)?.into_any(),
                PyList::new(py, declined)?.into_any(),
                matched.into_pyobject(py)?.into_any(),
                decisions_tuple(py, decisions, snapshots)?,
            ],
        )?))
    }

    /// A table's events on the set kernel, with no Python object per event or per result: the events of
    /// every stream partition of the call as Arrow buffers (`hamlet/runtime/columnar.py`), their partial
    /// aggregates as Arrow buffers. Rows are sorted by time; `types`: per row, its number in `type_names`;
    /// `times`: microseconds (`events::micros`); `partitions`: per row, its partition's number (dense from 0, `count` of
    /// them); `groups`: per grouping, per row, its group's number, which `group_offsets` turns into the
    /// caller's group code; `columns`: the attribute columns by name (`columns.rs`); `members`: per graph,
    /// per member, (query code, [(aggregate code, function, fields)]). Windows are kept where they end in
    /// `window_ends` (microseconds). A partition the kernel cannot compute whole and exactly is left to
    /// the caller (its number in `fallback`); the others' sums are written out and cleared.
    ///
    /// `texts`: the query names, group keys and aggregate texts the codes of `members` and `group_offsets`
    /// stand for.
    ///
    /// Returns (rows, query, group, window_start_us, window_end_us, aggregate, state, fallback, matched,
    /// decisions, records): int64 columns as bytes, text columns as a string array's (offsets, bytes).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (type_names, types, times, partitions, count, groups, group_offsets, columns, members,
                        texts, window_ends, sharing="none", segment=None))]
    fn run_columns<'py>(
        &mut self,
        py: Python<'py>,
        type_names: Vec<String>,
        types: Bound<'py, PyAny>,
        times: Bound<'py, PyAny>,
        partitions: Bound<'py, PyAny>,
        count: usize,
        groups: Vec<Bound<'py, PyAny>>,
        group_offsets: Vec<i64>,
        columns: Vec<(String, ColumnSpec<'py>)>,
        members: Vec<Vec<(i64, Vec<(i64, String, Vec<usize>)>)>>,
        texts: (Vec<String>, Vec<String>, Vec<String>),
        window_ends: (i64, i64),
        sharing: &str,
        segment: Option<(i64, i64)>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        if segment.is_some() {
            if let Some(reason) = self.segment_obstacle() {
                return Err(PyValueError::new_err(format!(
                    "segments of this set do not compose: {reason}"
                )));
            }
        }
        let Some(sharing) = Sharing::parse(sharing) else {
            return Err(PyValueError::new_err(format!(
                "sharing: none, static or hamlet, not {sharing:?}"
            )));
        };
        let members = self.member_specs(members)?;
        if groups.len() < self.groupings || group_offsets.len() < self.groupings {
            return Err(PyValueError::new_err(format!(
                "groups: one per grouping ({})",
                self.groupings
            )));
        }
        let (types, times, partitions) = (Bytes::get(&types)?, Bytes::get(&times)?, Bytes::get(&partitions)?);
        let (types, times, partitions) = (types.words::<i64>(), times.words::<i64>(), partitions.words::<i64>());
        let held_groups = groups.iter().map(Bytes::get).collect::<PyResult<Vec<_>>>()?;
        let groups: Vec<_> = held_groups.iter().map(|g| g.words::<i64>()).collect();
        let rows = types.len();
        if times.len() != rows || partitions.len() != rows || groups.iter().any(|g| g.len() != rows) {
            return Err(PyValueError::new_err(
                "types, times, partitions and groups: one value per row",
            ));
        }
        let kind_of: Vec<Option<usize>> = type_names.iter().map(|t| self.reader.types.get(t).copied()).collect();
        let held = columns
            .iter()
            .map(|(name, spec)| Ok((name.clone(), Held::new(spec)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let mut by_attribute: Vec<Option<columns::Column>> = (0..self.reader.attributes.len()).map(|_| None).collect();
        for (name, held) in &held {
            if let Some(a) = self
                .reader
                .attributes
                .iter()
                .position(|x| x.bind(py).to_str().is_ok_and(|x| x == name))
            {
                by_attribute[a] = Some(held.column()?);
            }
        }
        // The rows of each partition, in time order (a counting sort: stable).
        let mut starts = vec![0usize; count + 1];
        for &p in partitions.iter() {
            if p < 0 || p as usize >= count {
                return Err(PyValueError::new_err(format!("partition {p} outside 0..{count}")));
            }
            starts[p as usize + 1] += 1;
        }
        for p in 0..count {
            starts[p + 1] += starts[p];
        }
        let mut order = vec![0usize; rows];
        let mut next = starts.clone();
        for (row, &p) in partitions.iter().enumerate() {
            order[next[p as usize]] = row;
            next[p as usize] += 1;
        }
        let (mut fallback, mut matched, mut decisions, mut snapshots) = (Vec::new(), 0, Decisions::default(), 0);
        let mut records = Vec::new();
        'partitions: for p in 0..count {
            let mine = &order[starts[p]..starts[p + 1]];
            let mut raw = Vec::with_capacity(mine.len());
            for &row in mine {
                let Some(kind) = usize::try_from(types[row])
                    .ok()
                    .and_then(|t| kind_of.get(t).copied().flatten())
                else {
                    continue;
                };
                if times[row].abs() >= events::TIME_LIMIT {
                    fallback.push(p);
                    continue 'partitions;
                }
                let mut values = Vec::new();
                if !self.reader.needs[kind].is_empty() {
                    values = vec![values::Raw::Null; self.reader.attributes.len()];
                    for &a in &self.reader.needs[kind] {
                        if let Some(column) = &by_attribute[a] {
                            values[a] = column.raw(row);
                        }
                    }
                }
                raw.push(RawEvent {
                    kind,
                    time: times[row],
                    values,
                });
            }
            if raw.is_empty() {
                continue;
            }
            let Some(mut outcome) = self.compute_until(&raw, true, sharing, segment.map(|(_, t1)| t1)) else {
                fallback.push(p);
                continue;
            };
            for (g, record, scales) in std::mem::take(&mut outcome.records) {
                records.push(self.record_py(py, p, g, record, &scales)?);
            }
            let first = mine[0];
            let group_of = |g: usize, m: usize| groups[self.grouping_of[g][m]][first] as usize;
            let mut changes = Vec::with_capacity(outcome.computed.len());
            for (g, found, scales) in &outcome.computed {
                let graph = &self.graphs[*g].get().graph;
                match self.sums[*g].prepare(graph, found, scales, |m| group_of(*g, m)) {
                    Some(c) => changes.push((*g, c)),
                    None => {
                        fallback.push(p);
                        continue 'partitions;
                    }
                }
            }
            for (g, c) in changes {
                self.sums[g].commit(&self.graphs[g].get().graph, c);
            }
            matched += outcome.matched;
            decisions.add(&outcome.decisions);
            snapshots += outcome.snapshots;
        }
        let mut out = PartialColumns::new();
        for (g, kernel) in self.graphs.iter().enumerate() {
            let graph = &kernel.get().graph;
            let grouping = &self.grouping_of[g];
            out.write(graph, &self.sums[g], &members[g], window_ends, |m, group| {
                group_offsets[grouping[m]] + group as i64
            });
            self.sums[g] = GraphSums::new(graph);
        }
        let bytes = |v: &[i64]| -> Bound<'py, PyAny> {
            let raw: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            PyBytes::new(py, &raw).into_any()
        };
        let text = |(offsets, data): (Vec<u8>, Vec<u8>)| -> Bound<'py, PyAny> {
            (PyBytes::new(py, &offsets), PyBytes::new(py, &data))
                .into_pyobject(py)
                .expect("a pair")
                .into_any()
        };
        let (names, keys, aggregates) = &texts;
        let items: Vec<Bound<'py, PyAny>> = vec![
            out.query.len().into_pyobject(py)?.into_any(),
            text(partials::texts(&out.query, names)?),
            text(partials::texts(&out.group, keys)?),
            bytes(&out.window_start_us),
            bytes(&out.window_end_us),
            text(partials::texts(&out.aggregate, aggregates)?),
            text(partials::states(&out.offsets, std::mem::take(&mut out.data))?),
            PyList::new(py, fallback)?.into_any(),
            matched.into_pyobject(py)?.into_any(),
            decisions_tuple(py, decisions, snapshots)?,
            PyList::new(py, records)?.into_any(),
        ];
        PyTuple::new(py, items)
    }

    /// Why the set's time segments would not compose exactly (`vertical::obstacle` of its first graph
    /// that has one); None: they do.
    fn segment_obstacle(&self) -> Option<String> {
        self.graphs
            .iter()
            .find_map(|g| vertical::obstacle(&g.get().graph).map(String::from))
    }

    /// The set's joint graphs (`joint.rs`): per joint graph, the numbers of the graphs it runs as one.
    fn joint_groups(&self) -> Vec<Vec<usize>> {
        self.joints.iter().map(|group| group.graphs.clone()).collect()
    }

    /// What `run` summed, and the sums cleared: (graph, member, group, linear, [(window, value)]), a
    /// value being the change of the sum at that window for a linear aggregate (Python prefix-sums them),
    /// else the window's sum; values as Python holds aggregates.
    fn summed<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let mut out = Vec::new();
        for (g, kernel) in self.graphs.iter().enumerate() {
            let graph = &kernel.get().graph;
            let sums = std::mem::replace(&mut self.sums[g], GraphSums::new(graph));
            for (member, group, windows) in sums.series() {
                let mut entries = Vec::with_capacity(windows.len());
                for (&k, agg) in windows {
                    entries.push(PyTuple::new(
                        py,
                        [
                            k.into_pyobject(py)?.into_any(),
                            graph.to_python(py, agg, sums.scales())?,
                        ],
                    )?);
                }
                out.push(PyTuple::new(
                    py,
                    [
                        g.into_pyobject(py)?.into_any(),
                        member.into_pyobject(py)?.into_any(),
                        group.into_pyobject(py)?.into_any(),
                        PyBool::new(py, sums.is_linear()).to_owned().into_any(),
                        PyList::new(py, entries)?.into_any(),
                    ],
                )?);
            }
        }
        Ok(out)
    }
}

impl SetKernel {
    /// A segment record as Python reads it (`hamlet/runtime/vertical.py`): (partition, graph, leading,
    /// trailing, columns, windows, running, carry), columns as (kind, position, field) with kind 0 the
    /// constant, 1 a running total, 2 the starts; aggregates as lists of ints in the Python algebra's units
    /// (`Graph::to_python`), but a running sum's own coefficients, which are plain factors.
    fn record_py<'py>(
        &self,
        py: Python<'py>,
        p: usize,
        g: usize,
        r: vertical::SegmentRecord,
        scales: &[Scale],
    ) -> PyResult<Bound<'py, PyAny>> {
        let graph = &self.graphs[g].get().graph;
        let mut shift: Vec<u32> = vec![0; graph.kinds.len()];
        for u in graph.updates.iter().flatten().filter(|u| u.kind == SUM && u.scaled) {
            shift[u.field] = values::FLOAT_SCALE_BITS - scales[u.attribute].exponent;
        }
        let agg = |a: &Option<graph::Agg>, plain: bool| -> PyResult<Bound<'py, PyAny>> {
            let Some(a) = a else {
                return Ok(py.None().into_bound(py));
            };
            let mut items = Vec::with_capacity(a.len());
            for (f, v) in a.iter().enumerate() {
                items.push(match (graph.kinds[f], v.small()) {
                    (MIN, Some(i128::MAX)) | (MAX, Some(i128::MIN)) => py.None().into_bound(py),
                    (MIN | MAX, Some(key)) => values::key_value(key).into_py(py)?,
                    _ if plain || shift[f] == 0 => v.into_py(py)?,
                    _ => v.shl(shift[f]).into_py(py)?,
                });
            }
            Ok(PyList::new(py, items)?.into_any())
        };
        let plain: Vec<bool> = r
            .columns
            .iter()
            .map(|c| matches!(c, vertical::Column::Running { field, .. } if shift[*field] > 0))
            .collect();
        let columns = r.columns.iter().map(|c| match *c {
            vertical::Column::Constant => (0usize, 0usize, 0usize),
            vertical::Column::Running { position, field } => (1, position, field),
            vertical::Column::Starts => (2, 0, 0),
            vertical::Column::Extremes { alive, starts } => (3, alive as usize, starts as usize),
        });
        let positions = |list: &[Option<graph::Agg>], plain: bool| -> PyResult<Bound<'py, PyAny>> {
            let items = list.iter().map(|a| agg(a, plain)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, items)?.into_any())
        };
        let mut windows = Vec::with_capacity(r.windows.len());
        for (m, k, by_column) in &r.windows {
            let finals = by_column
                .iter()
                .zip(&plain)
                .map(|(a, &pl)| agg(a, pl))
                .collect::<PyResult<Vec<_>>>()?;
            windows.push((*m, *k, PyList::new(py, finals)?).into_pyobject(py)?.into_any());
        }
        let mut running = Vec::with_capacity(r.running.len());
        for (by_position, &pl) in r.running.iter().zip(&plain) {
            running.push(match by_position {
                Some(list) => positions(list, pl)?,
                None => py.None().into_bound(py),
            });
        }
        let mut carry = Vec::with_capacity(r.carry.len());
        for (m, k, by_position, fin, may_start) in &r.carry {
            carry.push(
                (*m, *k, positions(by_position, false)?, agg(fin, false)?, *may_start)
                    .into_pyobject(py)?
                    .into_any(),
            );
        }
        let items: Vec<Bound<'py, PyAny>> = vec![
            p.into_pyobject(py)?.into_any(),
            g.into_pyobject(py)?.into_any(),
            r.leading.into_pyobject(py)?.into_any(),
            r.trailing.into_pyobject(py)?.into_any(),
            PyList::new(py, columns.collect::<Vec<_>>())?.into_any(),
            PyList::new(py, windows)?.into_any(),
            PyList::new(py, running)?.into_any(),
            PyList::new(py, carry)?.into_any(),
        ];
        Ok(PyTuple::new(py, items)?.into_any())
    }

    /// `members` of `run_columns`, checked against the graphs.
    #[allow(clippy::type_complexity)]
    fn member_specs(&self, members: Vec<Vec<(i64, Vec<(i64, String, Vec<usize>)>)>>) -> PyResult<Vec<Vec<MemberSpec>>> {
        if members.len() != self.graphs.len() {
            return Err(PyValueError::new_err("members: one list per graph"));
        }
        let mut out = Vec::with_capacity(members.len());
        for (g, specs) in members.into_iter().enumerate() {
            let graph = &self.graphs[g].get().graph;
            if specs.len() != graph.members.len() {
                return Err(PyValueError::new_err(format!(
                    "members: graph {g} has {} members",
                    graph.members.len()
                )));
            }
            let mut parsed = Vec::with_capacity(specs.len());
            for (query, aggregates) in specs {
                let mut states = Vec::with_capacity(aggregates.len());
                for (code, function, fields) in aggregates {
                    let Some(f) = Function::parse(&function) else {
                        return Err(PyValueError::new_err(format!("an aggregate function {function:?}")));
                    };
                    if fields.len() != f.fields() || fields.iter().any(|&x| x >= graph.kinds.len().max(1)) {
                        return Err(PyValueError::new_err(format!(
                            "{function}: fields {fields:?} of graph {g}"
                        )));
                    }
                    states.push(StateSpec {
                        code,
                        function: f,
                        fields,
                    });
                }
                parsed.push(MemberSpec {
                    query,
                    aggregates: states,
                });
            }
            out.push(parsed);
        }
        Ok(out)
    }
}

fn decisions_tuple<'py>(py: Python<'py>, d: Decisions, snapshots: usize) -> PyResult<Bound<'py, PyAny>> {
    let items = [d.bursts, d.shared_bursts, d.graphlets, snapshots, d.splits, d.merges];
    Ok(PyTuple::new(py, items)?.into_any())
}

#[pymodule]
fn hamlet_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GraphKernel>()?;
    m.add_class::<SetKernel>()?;
    m.add_class::<segments::SegmentCosts>()?;
    m.add_function(wrap_pyfunction!(events::plain_events, m)?)?;
    m.add_function(wrap_pyfunction!(events::floor_micros_column, m)?)?;
    m.add_function(wrap_pyfunction!(events::clashing_partitions, m)?)?;
    // A panic reaches Python as this BaseException; named here so the CLI can tell a bug of ours from the input's.
    m.add("PanicException", m.py().get_type::<pyo3::panic::PanicException>())?;
    Ok(())
}
