package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/plugin"
)

// Authn collects an Authenticator's sign-in counts when scraped: the
// authenticator counts with atomic adds and knows nothing of Prometheus.
func Authn(a *authn.Authenticator) prometheus.Collector { return authnCollector{a} }

var (
	signInsDesc = prometheus.NewDesc("svc_authn_signins_total",
		"Requests with credentials, by method (basic, bearer, other: an unsupported header) and result (success, failure, throttled: refused unchecked by the failed sign-in brake, error: the store could not be read).",
		[]string{"method", "result"}, nil)
	throttledDesc = prometheus.NewDesc("svc_authn_throttled_total",
		"Sign-ins the failed sign-in brake refused unchecked, by the limit reached (user, address, table).",
		[]string{"limit"}, nil)
)

type authnCollector struct{ a *authn.Authenticator }

func (c authnCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- signInsDesc
	ch <- throttledDesc
}

func (c authnCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.a.SignIns() {
		ch <- prometheus.MustNewConstMetric(signInsDesc, prometheus.CounterValue, float64(s.Count), s.Method, s.Result)
	}
	for _, t := range c.a.Throttled() {
		ch <- prometheus.MustNewConstMetric(throttledDesc, prometheus.CounterValue, float64(t.Count), t.Limit)
	}
}

// Plugins collects each plugin's phase when scraped: one series per
// plugin and phase, 1 for the phase it is in and 0 for the others.
func Plugins(m *plugin.Manager) prometheus.Collector { return pluginCollector{m} }

var (
	pluginPhaseDesc = prometheus.NewDesc("svc_plugin_phase",
		"1 for the phase each plugin is in (PENDING, STARTING, STARTED, FAILED, STOPPING, STOPPED), 0 for the others.",
		[]string{"plugin", "phase"}, nil)
	phases = []string{plugin.Pending, plugin.Starting, plugin.Started, plugin.Failed, plugin.Stopping, plugin.Stopped}
)

type pluginCollector struct{ m *plugin.Manager }

func (c pluginCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pluginPhaseDesc }

func (c pluginCollector) Collect(ch chan<- prometheus.Metric) {
	for name, cur := range c.m.Phases() {
		for _, ph := range phases {
			v := 0.0
			if ph == cur {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(pluginPhaseDesc, prometheus.GaugeValue, v, name, ph)
		}
	}
}
