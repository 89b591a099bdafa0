//! One stream partition on a sharable query set's kernel (`SetKernel`, whose bindings are in `lib.rs`): the
//! events each match key's local predicates pass, the graphs with work, the joint graphs (`joint.rs`) and the
//! bursts shared in HAMLET's graphlets (`burst.rs`) that the benefit model chooses, decided on the raw events
//! before any graph holds its own, then every graph run over its events (`graph::Partition`). A shared burst
//! is held by each of its graphs as its first event alone where nothing reads the others: the work of its
//! events is done once, in the graphlet, and no graph pays for them one by one.

use std::borrow::Cow;

use crate::burst::{self, Decisions, Sharing};
use crate::events::RawEvent;
use crate::graph::{self, positive_of, Agg, Blocks, Partition, SharedBurst};
use crate::sums::Run;
use crate::values::Scale;
use crate::{joint, vertical, SetKernel};

impl SetKernel {
    /// One partition (`raw`, sorted by time) on every graph: the runs of those computed here with the
    /// scales of their values, those left to Python, and what sharing did; None when the partition is
    /// Python's (with `whole`: unless every graph is computed here).
    pub(crate) fn compute(&self, raw: &[RawEvent], whole: bool, sharing: Sharing) -> Option<Outcome> {
        self.compute_until(raw, whole, sharing, None)
    }

    /// `compute`, or with `segment_end` (a time segment of the partition, ending there: `vertical.rs`)
    /// the runs of the windows final in the segment and a record per graph for composition (always whole).
    pub(crate) fn compute_until(
        &self,
        raw: &[RawEvent],
        whole: bool,
        sharing: Sharing,
        segment_end: Option<i64>,
    ) -> Option<Outcome> {
        let Matched { matched, present, any } = self.matched(raw)?;
        // The graphs with work here.
        let mut busy = Vec::new();
        for (g, kernel) in self.graphs.iter().enumerate() {
            let graph = &kernel.get().graph;
            let mine = &matched[self.key_of[g]];
            // Every trend holds an event of each required type; windows of the run may lie elsewhere.
            let mut seen = vec![false; graph.types.len()];
            for (kind, _) in present[self.key_of[g]].iter().enumerate().filter(|(_, &there)| there) {
                if let Some(p) = positive_of(&self.roles[g][kind]) {
                    seen[p] = true;
                }
            }
            if segment_end.is_some() {
                // (what flows in from earlier segments may complete trends whatever this segment lacks)
                if mine.is_empty() {
                    continue;
                }
            } else if mine.is_empty()
                || !graph.required.iter().all(|&p| seen[graph.places[p][0]])
                || !graph.has_windows(raw[mine[0]].time, raw[mine[mine.len() - 1]].time)
            {
                continue;
            }
            busy.push(g);
        }
        // Graphs that run as one joint graph here (`joint.rs`): not in time segments, not under GRETA.
        let joint_runs = match (segment_end, sharing) {
            (None, Sharing::Static | Sharing::Hamlet) => self.joint_runs(raw, &matched, &busy, sharing),
            _ => Vec::new(),
        };
        let joint = |g: usize| {
            let of = |run: &JointRun| run.present.iter().any(|&bit| self.joints[run.joint].graphs[bit] == g);
            joint_runs.iter().any(of)
        };
        busy.retain(|&g| !joint(g));
        // The other graphs, each on its own; those the kernel cannot compute exactly are Python's, and the
        // rest run again without them (their bursts' decisions are the rest's alone).
        let mut declined = Vec::new();
        let Ran {
            mut computed,
            mut decisions,
            snapshots,
            records,
        } = loop {
            match self.run_graphs(raw, &matched, &present, &busy, sharing, segment_end) {
                Ok(ran) => break ran,
                Err(_) if whole => return None,
                Err(out) => {
                    busy.retain(|g| !out.contains(g));
                    declined.extend(out);
                }
            }
        };
        let joint_bursts = if joint_runs.is_empty() || self.pane <= 0 {
            Vec::new()
        } else {
            burst::bursts(raw, self.pane)
        };
        for run in &joint_runs {
            let group = &self.joints[run.joint];
            let blocks = Blocks {
                graphs: &group.blocks,
                zero: &group.zero,
                offsets: &group.offsets,
                widths: &group.widths,
                masks: &run.masks,
            };
            let found = Partition::new(&group.graph, &run.events, &run.scales)
                .and_then(|partition| partition.with_blocks(blocks).run(&[]));
            let Some((found, _)) = found else {
                if whole {
                    return None;
                }
                declined.extend(run.present.iter().map(|&bit| group.graphs[bit]));
                continue;
            };
            // Each graph's runs: its block of the joint finals, where it holds a trend.
            let mut runs: Vec<Vec<Run>> = vec![Vec::new(); group.graphs.len()];
            for (member, first, last, agg) in found {
                let (bit, m) = group.members[member];
                let block: Agg = agg[group.offsets[bit]..group.offsets[bit] + group.widths[bit]]
                    .iter()
                    .cloned()
                    .collect();
                if !block[0].is_zero() {
                    runs[bit].push((m, first, last, block));
                }
            }
            for &bit in &run.present {
                // (the scales as the graph numbers its attributes: the joint graph's units, at least as fine
                // as the graph's own events need, which its sums take as they take a finer partition's)
                let scales = group.renumbered[bit].iter().map(|&a| run.scales[a]).collect();
                computed.push((group.graphs[bit], std::mem::take(&mut runs[bit]), scales));
            }
            // (bursts of a type no graphlet shares are not counted by `burst::plan`: they are the joint graph's)
            for &(kind, ..) in &joint_bursts {
                if group.kleene[kind] && !self.shared[kind] {
                    decisions.bursts += 1;
                    decisions.shared_bursts += 1;
                }
            }
            decisions.graphlets += 1;
        }
        let matched = any.iter().filter(|&&m| m).count();
        Some(Outcome {
            computed,
            declined,
            matched,
            decisions,
            snapshots,
            records,
        })
    }

    /// `graphs` on their own: the bursts they share decided first (`burst::plan`, on the raw events each reads),
    /// then each graph's events, holding a shared burst's first event for them all where nothing reads the
    /// others (`Graph::events_with_bursts`), and its run. Err: the graphs the kernel cannot compute exactly.
    fn run_graphs(
        &self,
        raw: &[RawEvent],
        matched: &[Vec<usize>],
        present: &[Vec<bool>],
        graphs: &[usize],
        sharing: Sharing,
        segment_end: Option<i64>,
    ) -> Result<Ran, Vec<usize>> {
        let mines: Vec<Cow<[usize]>> = graphs
            .iter()
            .map(|&g| {
                let key = self.key_of[g];
                self.graph_events(g, raw, &matched[key], &present[key])
            })
            .collect();
        let readers: Vec<burst::Reader> = graphs
            .iter()
            .zip(&mines)
            .map(|(&g, mine)| burst::Reader {
                graph: &self.graphs[g].get().graph,
                roles: &self.roles[g],
                mine,
            })
            .collect();
        let plan = burst::plan(raw, self.pane, &self.shared, &readers, sharing);
        drop(readers);
        let mut prepared = Vec::with_capacity(graphs.len());
        let mut declined = Vec::new();
        for ((&g, mine), bursts) in graphs.iter().zip(&mines).zip(&plan.bursts) {
            let graph = &self.graphs[g].get().graph;
            let ranges: Vec<(usize, usize)> = bursts.iter().map(|&(from, to, _)| (from, to)).collect();
            let (roles, attribute_at) = (&self.roles[g], &self.attribute_at[g]);
            match graph.events_with_bursts(raw, mine, roles, attribute_at, &ranges, segment_end.is_some()) {
                Some(events) => prepared.push((g, events)),
                None => declined.push(g),
            }
        }
        drop(mines);
        let mut partitions: Vec<Partition> = Vec::with_capacity(prepared.len());
        for (g, (events, scales, _)) in &prepared {
            let graph = &self.graphs[*g].get().graph;
            let partition = Partition::new(graph, events, scales);
            let partition = match segment_end {
                Some(_) => partition.map(|p| p.with_class_zero(vertical::own_class_zero(graph))),
                None => partition,
            };
            match partition {
                Some(partition) => partitions.push(partition),
                None => declined.push(*g),
            }
        }
        if !declined.is_empty() {
            return Err(declined);
        }
        let mut ran = Ran {
            computed: Vec::with_capacity(prepared.len()),
            decisions: plan.decisions,
            snapshots: 0,
            records: Vec::new(),
        };
        for (((g, (events, scales, ranges)), partition), bursts) in prepared.iter().zip(partitions).zip(&plan.bursts) {
            let bursts: Vec<SharedBurst> = ranges
                .iter()
                .zip(bursts)
                .map(|(&(from, to), &(.., graphlet))| SharedBurst {
                    from,
                    to,
                    graphlet: &plan.graphlets[graphlet],
                })
                .collect();
            let found = match segment_end {
                Some(t1) => {
                    let graph = &self.graphs[*g].get().graph;
                    vertical::segment(graph, events, scales, t1, partition, &bursts).map(|(found, taken, record)| {
                        ran.records.push((*g, record, scales.clone()));
                        (found, taken)
                    })
                }
                None => partition.run(&bursts),
            };
            let Some((found, taken)) = found else {
                return Err(vec![*g]);
            };
            ran.snapshots += taken;
            ran.computed.push((*g, found, scales.clone()));
        }
        Ok(ran)
    }

    /// Graph g's events among those its key matched (`present`: which types are there): the ones of types it
    /// reads, or all of them as they are when it reads every type there.
    fn graph_events<'m>(&self, g: usize, raw: &[RawEvent], matched: &'m [usize], present: &[bool]) -> Cow<'m, [usize]> {
        let roles = &self.roles[g];
        if present.iter().zip(roles).all(|(&there, r)| !there || !r.is_empty()) {
            return Cow::Borrowed(matched);
        }
        Cow::Owned(
            matched
                .iter()
                .copied()
                .filter(|&i| !roles[raw[i].kind].is_empty())
                .collect(),
        )
    }

    /// The joint graphs that run on this partition: per group with two or more `busy` graphs, the union of
    /// their events with the graphs each is of, where the kernel reads every value exactly and the benefit
    /// model (hamlet) says one propagation pays.
    fn joint_runs(&self, raw: &[RawEvent], matched: &[Vec<usize>], busy: &[usize], sharing: Sharing) -> Vec<JointRun> {
        let mut out = Vec::new();
        for (j, group) in self.joints.iter().enumerate() {
            let mut present = Vec::new();
            let mut alone = vec![0; group.graphs.len()];
            let mut bits = vec![0u64; raw.len()];
            for (bit, &g) in group.graphs.iter().enumerate() {
                if !busy.contains(&g) {
                    continue;
                }
                present.push(bit);
                let mine = &matched[self.key_of[g]];
                alone[bit] = mine.len(); // (one event per matched one: no type at two places, no NOT)
                for &i in mine {
                    bits[i] |= 1 << bit;
                }
            }
            if present.len() < 2 {
                continue;
            }
            let indexes: Vec<usize> = (0..raw.len()).filter(|&i| bits[i] != 0).collect();
            let together = indexes.iter().map(|&i| (raw[i].kind, bits[i]));
            if sharing == Sharing::Hamlet && !joint::pays(group, &alone, together) {
                continue;
            }
            let Some((events, scales)) = group.graph.events(raw, &indexes, &group.roles, &group.attribute_at) else {
                continue;
            };
            let mut masks = Vec::with_capacity(events.len());
            for &i in &indexes {
                masks.extend(group.role_graphs[raw[i].kind].iter().map(|&graphs| bits[i] & graphs));
            }
            out.push(JointRun {
                joint: j,
                present,
                events,
                masks,
                scales,
            });
        }
        out
    }

    /// Per match key, the indexes of the events that pass its local predicates and which types they are of;
    /// per event, whether some key matched it. None: a predicate read a value only Python compares exactly.
    fn matched(&self, raw: &[RawEvent]) -> Option<Matched> {
        let mut matched = vec![Vec::new(); self.tests.len()];
        let mut present = vec![vec![false; self.keys_of_type.len()]; self.tests.len()];
        let mut any = vec![false; raw.len()];
        for (i, e) in raw.iter().enumerate() {
            for &key in &self.keys_of_type[e.kind] {
                let programs = self.tests[key][e.kind].as_ref().expect("a key that reads the type");
                let mut pass = true;
                for p in programs {
                    match p.test(&e.values) {
                        Ok(true) => {}
                        Ok(false) => {
                            pass = false;
                            break;
                        }
                        Err(()) => return None,
                    }
                }
                if pass {
                    matched[key].push(i);
                    present[key][e.kind] = true;
                    any[i] = true;
                }
            }
        }
        Some(Matched { matched, present, any })
    }
}

/// The events of a partition each match key's local predicates pass (`SetKernel::matched`).
struct Matched {
    matched: Vec<Vec<usize>>, // per key: the indexes of its events, ascending
    present: Vec<Vec<bool>>,  // per key, per type number: whether an event of it is among them
    any: Vec<bool>,           // per event: whether some key matched it
}

/// One partition's run of a joint graph: the group's graphs among the partition's (bits), the union of their
/// events, per event the graphs it is of, the scales of their values.
struct JointRun {
    joint: usize,
    present: Vec<usize>,
    events: Vec<graph::Event>,
    masks: Vec<u64>,
    scales: Vec<Scale>,
}

/// The graphs of a partition that ran on their own (`SetKernel::run_graphs`): their runs with the scales of
/// their values, the decisions of their bursts, the snapshots taken, and a time segment's records.
struct Ran {
    computed: Vec<(usize, Vec<Run>, Vec<Scale>)>,
    decisions: Decisions,
    snapshots: usize,
    records: Vec<(usize, vertical::SegmentRecord, Vec<Scale>)>,
}

/// One partition on the set kernel (`SetKernel::compute`).
pub(crate) struct Outcome {
    pub(crate) computed: Vec<(usize, Vec<Run>, Vec<Scale>)>, // (graph, its runs, the scales of its values)
    pub(crate) declined: Vec<usize>,                         // graphs left to Python
    pub(crate) matched: usize,                               // events some graph's local predicates match
    pub(crate) decisions: Decisions,
    pub(crate) snapshots: usize,
    pub(crate) records: Vec<(usize, vertical::SegmentRecord, Vec<Scale>)>, // a time segment's: per graph
}
