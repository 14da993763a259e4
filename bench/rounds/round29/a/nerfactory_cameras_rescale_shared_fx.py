# label: hazard silent
# why: Cameras.to() on the same device hands the very same fx/fy tensors to the new Cameras, so rescale_output_resolution's `self.fx *= scaling_factor` on the eval copy also halves the focal lengths of the training cameras, whose rays are then generated with the wrong intrinsics.
# source: https://github.com/nerfstudio-project/nerfstudio/pull/319 (Update dataset loaders; nerfactory/cameras/cameras.py rescale_output_resolution, commit 6ee6934581124d827faec54143790afd9809855b)
import torch

torch.manual_seed(0)


class Cameras:
    def __init__(self, camera_to_worlds, fx, fy, cx, cy, distortion_params=None):
        self._num_cameras = camera_to_worlds.shape[0]
        self.camera_to_worlds = camera_to_worlds
        if not isinstance(fx, torch.Tensor):
            fx = torch.Tensor([fx])
        if not isinstance(fy, torch.Tensor):
            fy = torch.Tensor([fy])
        self.fx = fx.broadcast_to((self._num_cameras)).to(self.device)
        self.fy = fy.broadcast_to((self._num_cameras)).to(self.device)
        self.cx = cx
        self.cy = cy
        self.distortion_params = distortion_params
        self._image_heights = int(self.cy * 2)
        self._image_widths = int(self.cx * 2)

    @property
    def device(self):
        return self.camera_to_worlds.device

    @property
    def image_height(self):
        return self._image_heights

    @property
    def image_width(self):
        return self._image_widths

    def to(self, device):
        return Cameras(
            camera_to_worlds=self.camera_to_worlds.to(device),
            fx=self.fx.to(device),
            fy=self.fy.to(device),
            cx=self.cx,
            cy=self.cy,
            distortion_params=self.distortion_params,
        )

    def get_image_coords(self, pixel_offset=0.5):
        image_coords = torch.meshgrid(torch.arange(self.image_height), torch.arange(self.image_width), indexing="ij")
        image_coords = torch.stack(image_coords, dim=-1) + pixel_offset
        return image_coords

    def generate_rays(self, camera_indices, coords):
        y = coords[..., 0]
        x = coords[..., 1]
        fx, fy = self.fx[camera_indices], self.fy[camera_indices]
        directions = torch.stack([(x - self.cx) / fx, -(y - self.cy) / fy, -torch.ones_like(x)], dim=-1)
        rotation = self.camera_to_worlds[camera_indices, :3, :3]
        directions = (rotation @ directions[..., None])[..., 0]
        directions = directions / directions.norm(dim=-1, keepdim=True)
        origins = self.camera_to_worlds[camera_indices, :3, 3].expand(directions.shape)
        return origins, directions

    def rescale_output_resolution(self, scaling_factor):
        self.fx *= scaling_factor  # <-- IPL002, IPL004
        self.fy *= scaling_factor  # <-- IPL002, IPL004
        self.cx *= scaling_factor
        self.cy *= scaling_factor


def main():
    num_cameras = 3
    poses = torch.eye(4)[:3].unsqueeze(0).repeat(num_cameras, 1, 1)
    poses[:, :3, 3] = torch.randn(num_cameras, 3)
    focal = torch.full((num_cameras,), 20.0) + torch.rand(num_cameras)
    train_cameras = Cameras(camera_to_worlds=poses, fx=focal, fy=focal, cx=8.0, cy=8.0)

    eval_cameras = train_cameras.to("cpu")
    eval_cameras.rescale_output_resolution(0.5)

    coords = torch.tensor([[3.5, 4.5], [10.5, 2.5], [7.5, 12.5]])
    camera_indices = torch.tensor([0, 1, 2])
    origins, directions = train_cameras.generate_rays(camera_indices, coords)
    eval_origins, eval_directions = eval_cameras.generate_rays(camera_indices, coords * 0.5)
    return directions, eval_directions


directions, eval_directions = main()
