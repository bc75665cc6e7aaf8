{{/*
Defaults shared by every deployable. The including chart's values (its values.yaml, then -f/--set)
are merged over these, so a thin chart sets only what is its own. Keys marked REQUIRED have no
default: rendering fails with a message naming the key when they are missing.
*/}}
{{- define "svc-lib.defaults" -}}
component:
  name: ""          # REQUIRED: gateway | crm | tasks | chat | files | webhooks
  kind: service     # service | gateway (the app.kubernetes.io/component label)
  main: main.mjs    # entry point in workingDir, run as `node <main>` (the image's bundle)
  migrate: ""       # migration entry point (migrate.mjs) run by the pre-install/pre-upgrade Job; "" = no Job

nameOverride: ""
fullnameOverride: ""

image:
  registry: ""      # REQUIRED, e.g. registry.example.com/acme
  repository: ""    # defaults to svc-<component.name>
  tag: ""           # REQUIRED, e.g. 1.4.2 or a git sha
  digest: ""        # optional sha256:… pinned after the tag
  pullPolicy: IfNotPresent
imagePullSecrets: []

# Working directory of the image: where its bundled main.mjs and migrate.mjs are.
workingDir: /app

replicaCount: 2
revisionHistoryLimit: 5
strategy:
  type: RollingUpdate
  rollingUpdate:
    maxSurge: 1
    maxUnavailable: 0

# The address the servers bind inside the pod (the services default to 127.0.0.1 outside a cluster).
listenHost: 0.0.0.0
ports:
  http: null        # REQUIRED: HTTP port (container and Service)
  grpc: null        # gRPC port; null = none (the gateway)
  metrics: null     # REQUIRED: GET /metrics only, the named port `metrics` (decision 0190)
  httpEnv: HTTP_PORT
  grpcEnv: GRPC_PORT
  metricsEnv: METRICS_PORT

# Plain settings, rendered into the ConfigMap and read with envFrom. HOST and the port variables are
# added from listenHost and ports. An empty value fails the render (remove a key with null instead).
env: {}
# Settings from an existing Secret: environment variable name -> key in that Secret.
existingSecret: ""  # REQUIRED when secretEnv is not empty; never created by these charts
secretEnv: {}
# Extra container env entries (full EnvVar objects), e.g. fieldRef values.
extraEnv: []

service:
  type: ClusterIP
  annotations: {}

ingress:
  enabled: false
  className: ""
  annotations: {}
  hosts: []         # [{host: api.example.com, paths: [{path: /, pathType: Prefix}]}]
  tls: []

serviceAccount:
  create: true
  name: ""
  annotations: {}
  automountToken: false

podAnnotations: {}
podLabels: {}
metrics:
  # prometheus.io/* annotations on the pods for an annotation-based scrape of /metrics on the metrics port
  scrapeAnnotations: true
  path: /metrics
  # A ServiceMonitor (monitoring.coreos.com/v1, the Prometheus Operator's CRD) for the Service's metrics port.
  serviceMonitor:
    enabled: false
    interval: 30s
    scrapeTimeout: 10s
    labels: {}      # e.g. release: kube-prometheus-stack, to match the Prometheus' serviceMonitorSelector
    honorLabels: false

# NetworkPolicy of the pods. Ingress: the gateway's http port from anywhere (or only from ingressFrom); a
# service's ports only from the platform's own pods in the namespace (part-of label); every pod's metrics port
# only from metricsFrom.
# Egress is open unless egress.enabled: then DNS, the platform's pods, and the rules in egress.to (the
# dependencies: Postgres, Redis, NATS; the outside world for webhooks and chat providers).
networkPolicy:
  enabled: true
  ingressFrom: []   # NetworkPolicyPeers allowed to reach the gateway; [] = anyone (it is the public entry)
  # NetworkPolicyPeers allowed to scrape the metrics port: by default the namespace `monitoring`, where
  # kube-prometheus-stack is usually installed (deploy/README.md); [] = no one
  metricsFrom:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: monitoring
  egress:
    enabled: false
    to: []          # NetworkPolicyEgressRules, e.g. [{to: [{ipBlock: {cidr: 10.0.5.0/24}}], ports: [{port: 5432}]}]

podSecurityContext:
  runAsNonRoot: true
  runAsUser: 1000
  runAsGroup: 1000
  fsGroup: 1000
  seccompProfile:
    type: RuntimeDefault
securityContext:
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
# The root filesystem is read-only: /tmp is a writable emptyDir.
tmpVolume:
  sizeLimit: 256Mi
extraVolumes: []
extraVolumeMounts: []

resources:
  requests:
    cpu: 100m
    memory: 256Mi
  limits:
    cpu: "1"
    memory: 512Mi

probes:
  startup:
    path: /healthz
    periodSeconds: 2
    timeoutSeconds: 2
    failureThreshold: 60
  liveness:
    path: /healthz
    periodSeconds: 10
    timeoutSeconds: 2
    failureThreshold: 3
  readiness:
    path: /readyz
    periodSeconds: 5
    timeoutSeconds: 3
    failureThreshold: 2

# Graceful shutdown: the preStop sleep lets endpoints drop the pod before SIGTERM; the process then
# has the rest of the grace period to drain (keep SHUTDOWN_GRACE_MS below grace - preStop).
terminationGracePeriodSeconds: 30
preStop:
  sleepSeconds: 5
  # false: the kubelet's sleep action (Kubernetes >= 1.30, the charts' kubeVersion)
  # true: run `sleep N` in the container (needs a sleep binary in the image)
  useExec: false

pdb:
  enabled: true
  maxUnavailable: 1
  minAvailable: null

autoscaling:
  enabled: false
  minReplicas: 2
  maxReplicas: 6
  targetCPUUtilizationPercentage: 70
  targetMemoryUtilizationPercentage: null

migration:
  enabled: true
  backoffLimit: 1
  activeDeadlineSeconds: 600
  # The Job runs before this release's ServiceAccount exists (pre-install); "" = the namespace's default.
  serviceAccountName: ""
  resources: {}     # {} = the container's resources
  annotations: {}

nodeSelector: {}
tolerations: []
affinity: {}
# Given constraints are rendered with tpl. None given + spreadAcrossNodes: a soft spread of the
# pods over nodes (ScheduleAnyway), so one node's loss does not take every replica.
topologySpreadConstraints: []
spreadAcrossNodes: true
priorityClassName: ""
{{- end -}}
