# label: hazard raises no-twin
# why: to save a render per step, the second frame's render_pkg is cached and reused as the first frame of the next iteration, but optimizer.step() has meanwhile updated the Gaussian xyz parameters that the cached graph saved
# source: https://github.com/RuijieZhu94/MotionGS/issues/3
import torch
import torch.nn as nn

torch.manual_seed(0)


class Camera:
    def __init__(self, time, cam_id, R, T):
        self.time = time
        self.cam_id = cam_id
        self.R = R
        self.T = T


class DeformModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, xyz, t):
        return self.mlp(torch.cat([xyz, t.expand(xyz.shape[0], 1)], dim=1))


class GaussianModel:
    def __init__(self, n=32):
        self._xyz = nn.Parameter(torch.randn(n, 3))
        self._opacity = nn.Parameter(torch.zeros(n, 1))
        self.deform = DeformModel()
        params = [{'params': [self._xyz], 'lr': 1e-3}, {'params': [self._opacity], 'lr': 1e-2},
                  {'params': self.deform.parameters(), 'lr': 1e-3}]
        self.optimizer = torch.optim.Adam(params)


def render(viewpoint_cam, gaussians):
    t = torch.tensor([[viewpoint_cam.time]])
    xyz = gaussians._xyz + gaussians.deform(gaussians._xyz, t)
    cam_pts = xyz @ viewpoint_cam.R.T + viewpoint_cam.T
    means2D = cam_pts[:, :2] / (cam_pts[:, 2:3].abs() + 1.0)
    alpha = torch.sigmoid(gaussians._opacity)
    image = (alpha * means2D).sum(0)
    return {"render": image, "means2D": means2D, "depth": cam_pts[:, 2:3]}


def calculate_gs_flow(render_pkg1, render_pkg2):
    return render_pkg2["means2D"] - render_pkg1["means2D"]


gaussians = GaussianModel()
viewpoint_cams = [Camera(k / 4.0, 0, torch.eye(3), torch.tensor([0., 0., 3.])) for k in range(4)]
gt_images = [torch.randn(2) for _ in range(4)]
optical_flows = [torch.randn(32, 2) * 0.01 for _ in range(3)]

last_viewpoint_cam = None
last_render_pkg = None
losses = []
for idx, viewpoint_cam in enumerate(viewpoint_cams):
    if last_viewpoint_cam is None:
        render_pkg1 = render(viewpoint_cam, gaussians)
        last_viewpoint_cam = viewpoint_cam
        last_render_pkg = render_pkg1
        continue
    render_pkg1 = last_render_pkg
    render_pkg2 = render(viewpoint_cam, gaussians)
    gs_flow = calculate_gs_flow(render_pkg1, render_pkg2)
    Ll1 = (render_pkg2["render"] - gt_images[idx]).abs().mean()
    flow_loss = (gs_flow - optical_flows[idx - 1]).abs().mean()
    loss = Ll1 + 0.1 * flow_loss
    loss.backward()
    gaussians.optimizer.step()  # <-- IPL001: updates _xyz in place while the cached render_pkg2 (reused next iteration) still needs it
    gaussians.optimizer.zero_grad(set_to_none=True)
    losses.append(loss.detach())
    last_viewpoint_cam = viewpoint_cam
    last_render_pkg = render_pkg2
