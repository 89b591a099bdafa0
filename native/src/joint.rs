//! Queries that share a Kleene sub-pattern under an edge predicate, propagated as one graph.
//!
//! A burst that meets an edge predicate (`P.price < NEXT(P).price`) cannot be shared through one graphlet
//! snapshot (`graphlet.rs`): each event's predecessors in earlier bursts are its own (the source events the
//! predicate admits), so every query would need a snapshot per event (HAMLET Definition 3.11), and each
//! query still looks its event up in its own ordered index. But the predecessor structure is the same for
//! every query that has that edge predicate: which earlier events admit an event, and where it ranks, does not
//! depend on the query. So the graphs of such queries run as one joint graph over the union of their events:
//! its aggregate is the queries' aggregates side by side (one block per graph), and an event's block of a
//! graph is that graph's value where the graph matches the event (its type at the position, its local
//! predicates) and zero elsewhere. Each event is ranked, stepped and committed once, and each ordered-index
//! node is walked once for all of them; what stays per query is the sum of its block.
//!
//! Joint graphs are graphs of the same shape (positions, transitions, edge predicates and the attributes
//! they read) that may differ in the types at each position, in their local predicates, in their aggregates
//! (what the masks and the blocks carry) and in their windows (the joint graph steps every window class of
//! any of them; each query reads its own windows' classes). They run under ANY without NOTs (what a block of
//! zeros cannot hold: a NOT's match depends on the query's own events). A sum over floats is kept in the
//! joint graph's unit, the finest any of its events needs, which each graph's sums take as they take a
//! partition that needed a finer one (`sums.rs`).

use crate::graph::{Agg, Graph, Member, Role, ANY};

/// Per event above this many graphs of one joint graph, their masks would not fit a word.
pub const MOST_GRAPHS: usize = 64;

/// The step cost of an event in units of one aggregate field added (the setup of its timestamp, its rank
/// in the ordered index, its commit), and a field of zeros in halves of one: the benefit model below weighs
/// the per-graph steps the joint graph saves against the blocks of zeros it carries for the graphs that do
/// not match an event. Fitted on 48 workloads of the shape (`bench/joint_calibration.py`: 2 to 20
/// queries, each matching 5 % to all of the bursts' events, counts of a few digits and of thousands):
/// the pairs (E, Z) with the least time lost lie along Z ≈ E/16, and (8, 1/2) is one of them.
pub const EVENT_COST: usize = 8;
const ZERO_HALVES: usize = 1;

/// Graphs of a set kernel that run as one joint graph.
pub struct JointGroup {
    pub graphs: Vec<usize>,           // the set's graph numbers, in order (bit i of a mask: graphs[i])
    pub graph: Graph,                 // the joint graph: the first's shape, every graph's block of fields
    pub zero: Agg,                    // the joint graph's zero
    pub blocks: Vec<Graph>,           // per graph: itself, its attributes numbered as the joint graph's
    pub attribute_at: Vec<usize>,     // the joint graph's attribute i is the set's attribute_at[i]
    pub renumbered: Vec<Vec<usize>>,  // per graph: its own attribute i is the joint graph's renumbered[i]
    pub offsets: Vec<usize>,          // per graph: its block's first field
    pub widths: Vec<usize>,           // per graph: its block's fields
    pub members: Vec<(usize, usize)>, // per member of the joint graph: (graph in the group, its member)
    /// Per type number of the set: the roles of the group's graphs (their union) and per role the graphs
    /// that have it (bit i: graphs[i]); whether it lies at a Kleene position under an edge predicate (its
    /// bursts are the ones the joint graph shares).
    pub roles: Vec<Vec<Role>>,
    pub role_graphs: Vec<Vec<u64>>,
    pub kleene: Vec<bool>,
    /// Per type number: whether each of its roles is at a position that only feeds running totals (`pays`).
    pub quiet: Vec<bool>,
    /// Per graph, and for the joint graph: the window classes an event falls into, at most (`pays`).
    pub classes: Vec<usize>,
    pub joint_classes: usize,
}

/// Whether a graph may run in a joint graph: ANY, no NOTs, no position template, and a Kleene position
/// whose events meet an edge predicate (elsewhere its bursts are shared through graphlets).
pub fn eligible(graph: &Graph) -> bool {
    graph.semantics == ANY
        && graph.negations.is_empty()
        && !graph.positional
        && !graph.event_grained
        && !graph.dominance
        && graph.resets.is_empty()
        && !graph.waits_for_ends()
        && graph.start_guard.iter().all(Option::is_none)
        && !graph.members.is_empty()
        && (0..graph.types.len()).any(|p| graph.kleene_edge_position(p))
}

/// How many of a graph's attributes its edges read: the first ones (`GraphKernel::new` numbers them first).
fn edge_attributes(graph: &Graph) -> usize {
    let mut read = Vec::new();
    for edge in &graph.edges {
        edge.predicates.iter().for_each(|p| p.attributes(&mut read));
        if let Some((_, f, g)) = &edge.index {
            f.attributes(&mut read);
            g.attributes(&mut read);
        }
    }
    read.into_iter().max().map_or(0, |a| a + 1)
}

/// What graphs must share to run jointly: everything but the types at positions, the aggregates (and the
/// attributes only they read), the members and their windows (the joint graph steps the union of their
/// window classes: a block's value in a class does not depend on whose window made it one, `pays` weighs
/// the classes a graph takes on).
fn shape(graph: &Graph) -> String {
    format!(
        "{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        graph.types.len(),
        graph.is_start,
        graph.is_end,
        graph.end_slot,
        graph.places,
        graph.required,
        graph.predecessors,
        graph.is_source,
        graph.edges,
        graph.edges_into,
        graph.edges_from,
    )
}

/// The joint groups among `graphs` (each eligible, with its attributes at `attribute_at` of the set's and
/// its roles per type number at `roles`): by shape, and within a shape by windows, as far as one joint
/// graph over two windows' graphs steps less than one each (`merge_windows`); of two graphs or more, at most
/// `MOST_GRAPHS` each.
pub fn groups(graphs: &[&Graph], attribute_at: &[Vec<usize>], roles: &[Vec<Vec<Role>>]) -> Vec<JointGroup> {
    let mut by_shape: Vec<(String, Vec<Vec<usize>>)> = Vec::new();
    for (g, graph) in graphs.iter().enumerate() {
        if !eligible(graph) {
            continue;
        }
        let key = format!("{}|{:?}", shape(graph), &attribute_at[g][..edge_attributes(graph)]);
        let at = match by_shape.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                by_shape.push((key, Vec::new()));
                by_shape.len() - 1
            }
        };
        let by_windows = &mut by_shape[at].1;
        match by_windows
            .iter_mut()
            .find(|members| graphs[members[0]].windows == graph.windows)
        {
            Some(members) => members.push(g),
            None => by_windows.push(vec![g]),
        }
    }
    let mut out = Vec::new();
    for (_, mut by_windows) in by_shape {
        merge_windows(graphs, &mut by_windows);
        for mut members in by_windows {
            members.sort_unstable();
            out.extend(
                members
                    .chunks(MOST_GRAPHS)
                    .filter(|chunk| chunk.len() > 1)
                    .map(|chunk| joint(graphs, attribute_at, roles, chunk.to_vec())),
            );
        }
    }
    out
}

/// Groups of one shape in windows of their own, merged two at a time while one joint graph steps less than
/// the two: per event, each of its window classes takes a step and every block's fields (a block of one
/// window in a joint graph of another is stepped in that one's classes too: ten queries in a tumbling window
/// and ten sliding through ten classes are cheaper as two joint graphs, three tumbling windows as one).
fn merge_windows(graphs: &[&Graph], groups: &mut Vec<Vec<usize>>) {
    if groups.len() > MOST_WINDOWS {
        return; // (each window its own joint graph: the pairs to weigh grow with the square)
    }
    let cost = |members: &[usize]| {
        let mut windows = Vec::new();
        for &g in members {
            for w in &graphs[g].windows {
                if !windows.contains(w) {
                    windows.push(*w);
                }
            }
        }
        let width: usize = members.iter().map(|&g| graphs[g].kinds.len()).sum();
        classes(&windows) * (EVENT_COST + width)
    };
    loop {
        let mut best: Option<(usize, usize, usize)> = None; // (steps saved, i, j)
        for i in 0..groups.len() {
            for j in i + 1..groups.len() {
                let apart = cost(&groups[i]) + cost(&groups[j]);
                let together = cost(&[groups[i].as_slice(), groups[j].as_slice()].concat());
                if together < apart && best.is_none_or(|(saved, ..)| apart - together > saved) {
                    best = Some((apart - together, i, j));
                }
            }
        }
        let Some((_, i, j)) = best else { break };
        let merged = groups.remove(j);
        groups[i].extend(merged);
    }
}

/// The joint graph of `members`: the first's shape, each graph's fields as one block, its updates and
/// members re-numbered into it. No fast path for ends (`final_only`): their waiting counts would add every
/// block where only the event's graphs may.
fn joint(graphs: &[&Graph], attribute_at: &[Vec<usize>], roles: &[Vec<Vec<Role>>], members: Vec<usize>) -> JointGroup {
    let mut graph = graphs[members[0]].clone();
    // The joint graph's attributes: the first graph's, then what the others aggregate besides (the edges'
    // come first in each and are the same); each graph's updates renumbered into them.
    let mut joint_at = attribute_at[members[0]].clone();
    let mut blocks = Vec::new();
    let mut renumberings = Vec::new();
    for &g in &members {
        let mut block = graphs[g].clone();
        let renumbered: Vec<usize> = attribute_at[g]
            .iter()
            .zip(&graphs[g].attributes)
            .map(|(&at, name)| match joint_at.iter().position(|&a| a == at) {
                Some(i) => i,
                None => {
                    joint_at.push(at);
                    graph.attributes.push(name.clone());
                    joint_at.len() - 1
                }
            })
            .collect();
        for u in block.updates.iter_mut().flatten() {
            if u.attribute != usize::MAX {
                u.attribute = renumbered[u.attribute];
            }
        }
        blocks.push(block);
        renumberings.push(renumbered);
    }
    for block in &mut blocks {
        block.attributes = graph.attributes.clone();
    }
    let (mut offsets, mut widths) = (Vec::new(), Vec::new());
    graph.kinds.clear();
    graph.updates.iter_mut().for_each(Vec::clear);
    graph.members.clear();
    graph.member_slot.clear();
    let mut joint_members = Vec::new();
    for (i, own) in blocks.iter().enumerate() {
        let offset = graph.kinds.len();
        offsets.push(offset);
        widths.push(own.kinds.len());
        graph.kinds.extend(&own.kinds);
        for (p, updates) in own.updates.iter().enumerate() {
            graph.updates[p].extend(updates.iter().map(|u| {
                let mut u = *u;
                u.field += offset;
                u
            }));
        }
        for (m, member) in own.members.iter().enumerate() {
            graph.members.push(*member);
            graph.member_slot.push(own.member_slot[m]);
            joint_members.push((i, m));
        }
    }
    graph.windows.clear();
    for member in &graph.members {
        if !graph.windows.contains(member) {
            graph.windows.push(*member);
        }
    }
    graph.count_only = false;
    graph.final_only.iter_mut().for_each(|f| *f = false);
    graph.end_groups = Default::default();
    // (a position that only feeds running totals in every graph: `Partition::add_to_running`)
    for (p, f) in graph.feeds_only.iter_mut().enumerate() {
        *f = blocks.iter().all(|b| b.feeds_only[p]);
    }
    let types = roles.first().map_or(0, Vec::len);
    let mut joint_roles: Vec<Vec<Role>> = vec![Vec::new(); types];
    let mut role_graphs: Vec<Vec<u64>> = vec![Vec::new(); types];
    for (bit, &g) in members.iter().enumerate() {
        for (t, own) in roles[g].iter().enumerate() {
            for &role in own {
                let r = joint_roles[t].iter().position(|&x| x == role).unwrap_or_else(|| {
                    joint_roles[t].push(role);
                    role_graphs[t].push(0);
                    joint_roles[t].len() - 1
                });
                role_graphs[t][r] |= 1 << bit;
            }
        }
    }
    let kleene = joint_roles
        .iter()
        .map(|rs| {
            rs.iter()
                .any(|r| r.positive().is_some_and(|p| graph.kleene_edge_position(p)))
        })
        .collect();
    let quiet = joint_roles
        .iter()
        .map(|rs| rs.iter().all(|r| r.positive().is_some_and(|p| graph.feeds_only[p])))
        .collect();
    JointGroup {
        quiet,
        classes: members.iter().map(|&g| classes(&graphs[g].windows)).collect(),
        joint_classes: classes(&graph.windows),
        zero: graph.zero(),
        roles: joint_roles,
        role_graphs,
        kleene,
        graphs: members,
        graph,
        blocks,
        attribute_at: joint_at,
        renumbered: renumberings,
        offsets,
        widths,
        members: joint_members,
    }
}

/// Eq. 7 for a joint graph over one partition: `alone[i]` events of graph i stepped on their own (each a
/// step and its block's fields), against each event of `together` (its type number, the graphs it matches)
/// stepped once: its graphs' blocks, and the other blocks as zeros, but at a position that only feeds
/// running totals, where it adds to its graphs' blocks alone (`Partition::add_to_running`).
/// Each step is paid per window class the event falls into: a graph's `classes`, the joint graph's those of
/// every window of its graphs.
pub fn pays(group: &JointGroup, alone: &[usize], together: impl Iterator<Item = (usize, u64)>) -> bool {
    let separate: usize = (0..alone.len())
        .map(|b| alone[b] * group.classes[b] * (EVENT_COST + group.widths[b]))
        .sum();
    let width: usize = group.widths.iter().sum();
    let mut joint = 0;
    for (kind, mut mask) in together {
        let mut matched = 0;
        while mask != 0 {
            matched += group.widths[mask.trailing_zeros() as usize];
            mask &= mask - 1;
        }
        let zeros = if group.quiet[kind] { 0 } else { width - matched };
        joint += 2 * (EVENT_COST + matched) + ZERO_HALVES * zeros;
    }
    joint * group.joint_classes < 2 * separate
}

/// The window classes an event falls into under `windows`, at most: the distinct starts of the windows that
/// hold time 0, where every window's grid meets (two windows that start together are one class; consecutive
/// ones with no event between their starts are one too, which both sides of `pays` gain alike). Counted up
/// to `MOST_CLASSES`: a century sliding by a microsecond would be 3·10^15, and beyond a thousand classes an
/// event's steps are many whichever the count.
fn classes(windows: &[Member]) -> usize {
    let mut starts = Vec::new();
    for m in windows {
        let mut start = 0;
        while start > -m.within && starts.len() < MOST_CLASSES {
            starts.push(start);
            start -= m.slide.max(1);
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts.len().max(1)
}

const MOST_CLASSES: usize = 1 << 10;

/// Above this many distinct windows among the graphs of one shape, `merge_windows` leaves each its own.
const MOST_WINDOWS: usize = 16;
