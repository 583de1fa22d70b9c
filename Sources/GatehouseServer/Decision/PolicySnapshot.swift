import GatehouseCore

/// What the decisions read of the configuration, as one value: the access rules (`access:`) and the upstreams
/// (`backend`, `upstreams:`, `forward_auth.apps:`). Read once per request by both front ends and every route that
/// judges (``CurrentPolicy/current``), and replaced as a whole on SIGHUP, so no request sees the new rules with the
/// old upstreams or the other way round.
struct PolicySnapshot: Sendable {
    let access: AccessPolicy
    let upstreams: UpstreamTable
}
