//! The partial aggregates of a set's summed windows as Arrow columns, each state written exactly as
//! `hamlet.partials.AggregateState.to_text` writes it (one line of JSON, every integer as `Num::to_text`), so
//! the Spark job's second stage merges the kernel's rows and Python's alike.

use pyo3::exceptions::PyValueError;
use pyo3::PyResult;

use crate::graph::Graph;
use crate::num::Num;
use crate::sums::GraphSums;
use crate::values::key_value;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    /// COUNT(*) of `P AND Q`: the trends P only, Q only and both match (C_i, C_j, C_ij of dissertation §12),
    /// which add across partitions; `AggregateState.value` turns them into the number of pairs at the end.
    Pairs,
}

impl Function {
    pub fn parse(name: &str) -> Option<Function> {
        Some(match name {
            "COUNT" => Function::Count,
            "SUM" => Function::Sum,
            "AVG" => Function::Avg,
            "MIN" => Function::Min,
            "MAX" => Function::Max,
            "PAIRS" => Function::Pairs,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Function::Count => "COUNT",
            Function::Sum => "SUM",
            Function::Avg => "AVG",
            Function::Min => "MIN",
            Function::Max => "MAX",
            Function::Pairs => "PAIRS",
        }
    }

    /// How many of the graph's fields the state reads: COUNT its count, MIN/MAX the extreme, SUM/AVG the
    /// sum, the non-null count and the float count (`aggregates.VectorAlgebra.states`).
    pub fn fields(self) -> usize {
        match self {
            Function::Sum | Function::Avg | Function::Pairs => 3,
            _ => 1,
        }
    }
}

/// One RETURN aggregate of a member: its number in the caller's list of (query, aggregate), its function,
/// and the graph's fields it reads.
pub struct StateSpec {
    pub code: i64,
    pub function: Function,
    pub fields: Vec<usize>,
}

/// One member (query) of a graph: its number in the caller's list of queries, its aggregates.
pub struct MemberSpec {
    pub query: i64,
    pub aggregates: Vec<StateSpec>,
}

/// The partial rows, column by column (Arrow's layout: a large_string's offsets and bytes).
#[derive(Default)]
pub struct PartialColumns {
    pub query: Vec<i64>,
    pub group: Vec<i64>,
    pub window_start_us: Vec<i64>,
    pub window_end_us: Vec<i64>,
    pub aggregate: Vec<i64>,
    pub offsets: Vec<i64>,
    pub data: Vec<u8>,
}

impl PartialColumns {
    pub fn new() -> PartialColumns {
        PartialColumns {
            offsets: vec![0],
            ..Default::default()
        }
    }

    /// Every window of a graph's sums whose end lies in (`ends.0`, `ends.1`] (microseconds): a linear
    /// aggregate's changes prefix-summed as `aggregates.WindowSums.items` does (windows whose count is 0
    /// have no row), other sums as they are. `group_code(member, group)`: the group's number in the
    /// caller's list of group keys.
    pub fn write(
        &mut self,
        graph: &Graph,
        sums: &GraphSums,
        members: &[MemberSpec],
        ends: (i64, i64),
        group_code: impl Fn(usize, usize) -> i64,
    ) {
        for (member, group, windows) in sums.series() {
            let mut ks: Vec<i64> = windows.keys().copied().collect();
            ks.sort_unstable();
            let code = group_code(member, group);
            if !sums.is_linear() {
                for k in ks {
                    self.window(graph, sums, member, &members[member], code, k, &windows[&k], ends);
                }
                continue;
            }
            let mut running: Option<crate::graph::Agg> = None;
            for pair in ks.windows(2) {
                let (k, following) = (pair[0], pair[1]);
                let total = match running.as_mut() {
                    Some(total) => {
                        graph.add(total, &windows[&k]);
                        &*total
                    }
                    None => running.insert(windows[&k].clone()),
                };
                if total[0].is_zero() {
                    continue;
                }
                for window in k..following {
                    self.window(graph, sums, member, &members[member], code, window, total, ends);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn window(
        &mut self,
        graph: &Graph,
        sums: &GraphSums,
        member: usize,
        spec: &MemberSpec,
        group: i64,
        k: i64,
        agg: &[Num],
        ends: (i64, i64),
    ) {
        let windows = &graph.members[member];
        let start = k * windows.slide;
        let end = start + windows.within;
        if !(ends.0 < end && end <= ends.1) {
            return;
        }
        for state in &spec.aggregates {
            self.query.push(spec.query);
            self.group.push(group);
            self.window_start_us.push(start);
            self.window_end_us.push(end);
            self.aggregate.push(state.code);
            write_state(&mut self.data, state, agg, sums);
            self.offsets.push(self.data.len() as i64);
        }
    }
}

/// `AggregateState.to_text`: [function, count, numerator, denominator, floats, extreme], and for PAIRS the
/// three classes.
fn write_state(out: &mut Vec<u8>, state: &StateSpec, agg: &[Num], sums: &GraphSums) {
    let name = state.function.name();
    let text = match state.function {
        Function::Count => format!(
            "[\"{name}\", \"{}\", \"0\", \"1\", \"0\", null]",
            agg[state.fields[0]].to_text()
        ),
        Function::Min | Function::Max => {
            let field = state.fields[0];
            let sentinel = if state.function == Function::Min {
                i128::MAX
            } else {
                i128::MIN
            };
            let extreme = match agg[field].small() {
                None => unreachable!("an extreme is an order key"),
                Some(key) if key == sentinel => "null".to_owned(),
                Some(key) => key_value(key).text(),
            };
            format!("[\"{name}\", \"0\", \"0\", \"1\", \"0\", {extreme}]")
        }
        Function::Pairs => {
            let [p, q, both] = [0, 1, 2].map(|i| agg[state.fields[i]].to_text());
            format!("[\"{name}\", \"0\", \"0\", \"1\", \"0\", null, [\"{p}\", \"{q}\", \"{both}\"]]")
        }
        Function::Sum | Function::Avg => {
            let (sum, nonnull, floats) = (state.fields[0], state.fields[1], state.fields[2]);
            let exponent = sums.field_unit(sum);
            let (numerator, denominator) = agg[sum].ratio_text(exponent);
            format!(
                "[\"{name}\", \"{}\", \"{numerator}\", \"{denominator}\", \"{}\", null]",
                agg[nonnull].to_text(),
                agg[floats].to_text()
            )
        }
    };
    out.extend_from_slice(text.as_bytes());
}

/// A text column of `codes`, each the number of its text in `texts`, as a string array's buffers: its
/// offsets (int32, as bytes) and its bytes.
pub fn texts(codes: &[i64], texts: &[String]) -> PyResult<(Vec<u8>, Vec<u8>)> {
    let mut offsets = Vec::with_capacity(4 * (codes.len() + 1));
    let mut data = Vec::new();
    offsets.extend_from_slice(&0i32.to_le_bytes());
    for &code in codes {
        let text = usize::try_from(code).ok().and_then(|c| texts.get(c));
        let Some(text) = text else {
            return Err(PyValueError::new_err(format!("no text for code {code}")));
        };
        data.extend_from_slice(text.as_bytes());
        offsets.extend_from_slice(&offset(data.len())?.to_le_bytes());
    }
    Ok((offsets, data))
}

/// The states (`offsets` into `data`, as `PartialColumns` writes them) as a string array's buffers.
pub fn states(offsets: &[i64], data: Vec<u8>) -> PyResult<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::with_capacity(4 * offsets.len());
    for &o in offsets {
        out.extend_from_slice(&offset(o as usize)?.to_le_bytes());
    }
    Ok((out, data))
}

/// An offset of a string array (int32): a call's partial rows hold less than 2 GiB of text.
fn offset(at: usize) -> PyResult<i32> {
    i32::try_from(at).map_err(|_| {
        PyValueError::new_err("the partial rows of one call hold more than 2 GiB of text: call with fewer rows")
    })
}
