{{/* The objects' name: the release's, unless fullnameOverride says otherwise. */}}
{{- define "vgpu.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selects this release's pods; app.kubernetes.io/name is every variant's (the NetworkPolicy and PodMonitor). */}}
{{- define "vgpu.selectorLabels" -}}
app.kubernetes.io/name: vgpu-device-plugin
app.kubernetes.io/instance: {{ include "vgpu.fullname" . }}
{{- end -}}

{{- define "vgpu.labels" -}}
{{ include "vgpu.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "vgpu.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* Whether the daemon runs NVML: the NVML variant in device-plugin mode. */}}
{{- define "vgpu.nvml" -}}
{{- if and .Values.nvml.enabled (eq .Values.mode "device-plugin") }}true{{ end -}}
{{- end -}}

{{/* The daemon's arguments, as the kustomize overlays pass them. */}}
{{- define "vgpu.args" -}}
- serve
{{- if eq .Values.mode "dra" }}
- --mode=dra
- --dra-driver={{ .Values.dra.driver }}
- --host-root=/host
- --kubelet-root={{ .Values.dra.kubeletRoot }}
- --cdi-dir={{ .Values.dra.cdiDir }}
- --state-dir={{ .Values.stateDir }}
{{- else }}
- --host-root=/host
- --device-plugin-dir=/var/lib/kubelet/device-plugins
- --state-dir={{ .Values.stateDir }}
{{- end }}
{{- if not (include "vgpu.nvml" .) }}
- --no-nvml
{{- end }}
- --metrics-address=0.0.0.0:{{ .Values.metrics.port }}
{{- end -}}

{{/* The node affinity of nodeSelection, or the affinity value when one is given. */}}
{{- define "vgpu.affinity" -}}
{{- if .Values.affinity -}}
{{ toYaml .Values.affinity }}
{{- else if ne .Values.nodeSelection "none" -}}
{{- $nvml := include "vgpu.nvml" . -}}
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          {{- if eq .Values.nodeSelection "workload-label" }}
          - key: nvidia.com/gpu.workload.config
            operator: In
            values: {{ if $nvml }}["vm-vgpu"]{{ else }}["vm-passthrough", "vm-vgpu"]{{ end }}
          {{- else if eq .Values.nodeSelection "gpu-operator" }}
          - key: {{ if $nvml }}nvidia.com/gpu.deploy.vgpu-manager{{ else }}nvidia.com/gpu.deploy.sandbox-validator{{ end }}
            operator: In
            values: ["true"]
          {{- else }}
          {{- fail (printf "nodeSelection %q: use workload-label, gpu-operator or none" .Values.nodeSelection) }}
          {{- end }}
          - key: vgpu.dev/nvml
            operator: {{ if $nvml }}In{{ else }}NotIn{{ end }}
            values: ["true"]
{{- end -}}
{{- end -}}

{{/* The resources value, else the measured defaults of the variant (deploy/ says where each figure comes from). */}}
{{- define "vgpu.resources" -}}
{{- if .Values.resources -}}
{{ toYaml .Values.resources }}
{{- else if include "vgpu.nvml" . -}}
requests:
  cpu: 10m
  memory: 144Mi
limits:
  memory: 256Mi
{{- else if eq .Values.mode "dra" -}}
requests:
  cpu: 10m
  memory: 160Mi
limits:
  memory: 192Mi
{{- else -}}
requests:
  cpu: 10m
  memory: 128Mi
limits:
  memory: 192Mi
{{- end -}}
{{- end -}}
