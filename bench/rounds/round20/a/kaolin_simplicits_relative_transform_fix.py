# label: safe
# why: the fixed standard_transform_to_relative builds relative_transform = relative_transform - I as a new tensor, so the caller's init_transform is left intact and can be reused for several objects.
# source: https://github.com/NVIDIAGameWorks/kaolin/commit/473f3e7296c79711328fc22829c3d943f9e36717 (post-fix kaolin/physics/utils/torch_utilities.py)
import torch

torch.manual_seed(0)


def standard_transform_to_relative(transform):
    if transform.shape == (4, 4):
        relative_transform = transform[:3, :]
    elif transform.shape == (3, 4):
        relative_transform = transform
    else:
        raise ValueError("standard transform must be a 3x4 or 4x4 tensor")

    # Important! We don't want to change transform in place, but return new one
    relative_transform = relative_transform - torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0],
                                                            [0, 0, 1, 0]], device=transform.device, dtype=transform.dtype)

    return relative_transform


class SimulatedObject:
    def __init__(self, points, skinning_weights):
        self.points = points
        self.skinning_weights = skinning_weights
        self.init_transform = None


class SimplicitsScene:
    def __init__(self):
        self.sim_obj_dict = {}
        self.current_id = 0

    def add_object(self, sim_object, init_transform=None):
        if init_transform is None:
            init_transform = torch.eye(4)
        relative_transform = standard_transform_to_relative(init_transform)
        sim_object.init_transform = relative_transform
        self.sim_obj_dict[self.current_id] = sim_object
        self.current_id += 1
        return self.current_id - 1

    def get_object_deformed_pts(self, object_id):
        obj = self.sim_obj_dict[object_id]
        pts_h = torch.cat([obj.points, torch.ones_like(obj.points[:, :1])], dim=1)
        # x' = x + sum_h w_h * (T_h - I) x
        delta = pts_h @ obj.init_transform.t()
        return obj.points + obj.skinning_weights * delta


def main():
    cube = torch.rand(8, 3)
    weights = torch.ones(8, 1)
    scene = SimplicitsScene()
    transform = torch.tensor([[1., 0, 0, 0], [0, 1, 0, 10], [0, 0, 1, 0], [0, 0, 0, 1]])
    id0 = scene.add_object(SimulatedObject(cube, weights), init_transform=transform)
    id1 = scene.add_object(SimulatedObject(cube, weights), init_transform=transform)
    return scene.get_object_deformed_pts(id0), scene.get_object_deformed_pts(id1)


pts0, pts1 = main()
