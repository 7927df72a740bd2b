// Package helm is gantry's helm plugin: it renders a Helm chart with the
// Helm SDK and deploys what it renders through the kubernetes plugin's stage
// engine (seed 004: CRDs first, hooks by weight, werf.io/weight groups
// tracked to readiness, pruning), as werf does; and it records each deploy
// as a Helm release in Helm's own storage (Secrets in the release
// namespace), so that helm list, helm history and helm get values show what
// gantry deployed, and a release helm installed is upgraded, not created
// again.
//
// A component folder with a chart (Chart.yaml) or a values file for one
// (values.yaml, values.yaml.template, values.yaml.gotemplate) and no
// Makefile or script is deployed with this plugin, as the Hub CLI deploys
// it with its helm extension: the chart, repository and version come from
// the component's HELM_CHART, HELM_REPO and HELM_CHART_VERSION, the release
// name from COMPONENT_NAME and the namespace from NAMESPACE.
package helm
