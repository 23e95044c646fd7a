//! A generated corpus of realistic mixed Windows/Linux manifests, as Helm renders them: several
//! documents per file with `# Source:` comments, Deployments, DaemonSets, Services, ConfigMaps,
//! IIS apps with config-copy entrypoints, HostProcess agents, Linux workloads with and without
//! selectors. Deterministic (no RNG crate): variety comes from the index.

const WINDOWS_IMAGES: &[&str] = &[
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019",
    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
    "mcr.microsoft.com/windows/nanoserver:ltsc2022",
    "mcr.microsoft.com/dotnet/framework/runtime:4.8.1-windowsservercore-ltsc2022",
    "registry.example.com/team/legacy-app:2.3.1",
];
const LINUX_IMAGES: &[&str] = &[
    "nginx:1.27",
    "busybox:1.36",
    "quay.io/prometheus/node-exporter:v1.8.0",
    "redis:7-alpine",
];

fn windows_deployment(i: usize) -> String {
    let image = WINDOWS_IMAGES[i % WINDOWS_IMAGES.len()];
    let selector = if i.is_multiple_of(3) {
        ""
    } else {
        "      nodeSelector:\n        kubernetes.io/os: windows\n"
    };
    let tolerations = if i.is_multiple_of(4) {
        ""
    } else {
        "      tolerations:\n      - key: os\n        operator: Equal\n        value: windows\n        effect: NoSchedule\n"
    };
    format!(
        r#"---
# Source: app-{i}/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  namespace: team-{ns}
  labels:
    app.kubernetes.io/name: app-{i}
    app.kubernetes.io/instance: release-{i}
    helm.sh/chart: app-1.2.3
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app.kubernetes.io/name: app-{i}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-{i}
      annotations:
        checksum/config: 5f0c3e1a9b7d2c4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e
    spec:
{selector}{tolerations}      containers:
      - name: web
        image: "{image}"
        imagePullPolicy: IfNotPresent
        command:
        - powershell.exe
        - -NoProfile
        - -Command
        - Copy-Item -Path C:\config\web.config -Destination C:\inetpub\wwwroot\web.config -Force; C:\ServiceMonitor.exe w3svc
        ports:
        - name: http
          containerPort: 80
          protocol: TCP
        env:
        - name: ASPNETCORE_ENVIRONMENT
          value: Production
        - name: ConnectionStrings__Default
          valueFrom:
            secretKeyRef:
              name: app-{i}-db
              key: connection
        resources:
          requests:
            cpu: 500m
            memory: 1Gi
          limits:
            cpu: "2"
            memory: 1Gi
        readinessProbe:
          httpGet:
            path: /health
            port: http
          initialDelaySeconds: 30
          periodSeconds: 10
        volumeMounts:
        - name: config
          mountPath: C:\config
      volumes:
      - name: config
        configMap:
          name: app-{i}-config
---
# Source: app-{i}/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: app-{i}
  namespace: team-{ns}
spec:
  type: {svc_type}
  selector:
    app.kubernetes.io/name: app-{i}
  ports:
  - port: 80
    targetPort: http
---
# Source: app-{i}/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-{i}-config
  namespace: team-{ns}
data:
  web.config: |
    <?xml version="1.0" encoding="utf-8"?>
    <configuration>
      <appSettings>
        <add key="Environment" value="production" />
        <add key="FeatureFlags" value="a,b,c" />
      </appSettings>
    </configuration>
"#,
        ns = i % 7,
        replicas = 2 + i % 5,
        svc_type = if i.is_multiple_of(5) {
            "LoadBalancer"
        } else {
            "ClusterIP"
        },
    )
}

fn linux_deployment(i: usize) -> String {
    let image = LINUX_IMAGES[i % LINUX_IMAGES.len()];
    let selector = if i.is_multiple_of(2) {
        "      nodeSelector:\n        kubernetes.io/os: linux\n"
    } else {
        ""
    };
    format!(
        r#"---
# Source: svc-{i}/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
  labels:
    app: svc-{i}
spec:
  replicas: 3
  selector:
    matchLabels:
      app: svc-{i}
  template:
    metadata:
      labels:
        app: svc-{i}
    spec:
{selector}      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        fsGroup: 2000
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: main
        image: {image}
        args: ["--port=8080", "--log-level=info"]
        ports:
        - containerPort: 8080
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: [ALL]
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
          limits: {{cpu: 500m, memory: 256Mi}}
        livenessProbe:
          httpGet: {{path: /healthz, port: 8080}}
"#
    )
}

fn hostprocess_daemonset(i: usize) -> String {
    format!(
        r#"---
# Source: agent-{i}/templates/daemonset.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent-{i}
  namespace: monitoring
spec:
  selector:
    matchLabels: {{app: agent-{i}}}
  template:
    metadata:
      labels: {{app: agent-{i}}}
    spec:
      securityContext:
        windowsOptions:
          hostProcess: true
          runAsUserName: "NT AUTHORITY\\system"
      hostNetwork: true
      nodeSelector:
        kubernetes.io/os: windows
      tolerations:
      - operator: Exists
      containers:
      - name: exporter
        image: ghcr.io/prometheus-community/windows-exporter:0.25.1
        args: ["--config.file=%CONTAINER_SANDBOX_MOUNT_POINT%/config.yml"]
        ports:
        - containerPort: 9182
          hostPort: 9182
"#
    )
}

/// One rendered chart's worth of documents (roughly 6 KB).
pub fn chart(i: usize) -> String {
    let mut s = windows_deployment(i);
    s.push_str(&linux_deployment(i));
    if i.is_multiple_of(3) {
        s.push_str(&hostprocess_daemonset(i));
    }
    s
}

/// Files of about `file_size` bytes until `total` bytes are generated.
pub fn corpus(total: usize, file_size: usize) -> Vec<String> {
    let mut files = Vec::new();
    let mut current = String::new();
    let mut produced = 0;
    let mut i = 0;
    while produced < total {
        let c = chart(i);
        produced += c.len();
        current.push_str(&c);
        i += 1;
        if current.len() >= file_size {
            files.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        files.push(current);
    }
    files
}
