# label: hazard silent
# why: standard_transform_to_relative subtracts the identity from the caller's init_transform in place (relative_transform -= ...), so when the same transform tensor is passed to add_object for a second object it is already relative and the second object gets transform - 2*I.
# source: https://github.com/NVIDIAGameWorks/kaolin/pull/947 (commit aea756ecde3ac978cdb54bfc0732bbd4fa4b0583)
import torch

torch.manual_seed(0)


def standard_transform_to_relative(transform):
    r"""Converts a standard transform to a relative transform (3x4)."""
    if transform.shape == (4, 4):
        relative_transform = transform[:3, :]
    elif transform.shape == (3, 4):
        relative_transform = transform
    else:
        raise ValueError("standard transform must be a 3x4 or 4x4 tensor")

    relative_transform -= torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0],  # <-- IPL004
                                        [0, 0, 1, 0]], device=transform.device, dtype=transform.dtype)

    return relative_transform


class SimplicitsObject:
    def __init__(self, num_handles):
        self.num_handles = num_handles


class SimulatedObject:
    def __init__(self, sim_object, obj_id, num_qp, num_cp, init_transform, is_kinematic):
        self.sim_object = sim_object
        self.obj_id = obj_id
        self.num_qp = num_qp
        self.num_cp = num_cp
        self.num_handles = sim_object.num_handles
        self.init_transform = init_transform
        self.is_kinematic = is_kinematic


class SimplicitsScene:
    def __init__(self, device="cpu", dtype=torch.float32):
        self.device = device
        self.dtype = dtype
        self.sim_obj_dict = {}
        self.current_id = 0
        self.sim_z = None

    def add_object(self, sim_object, num_qp=1000, init_transform=None, is_kinematic=False):
        num_cp = num_qp
        # Subtract identity transform from init transform to get relative transform
        if torch.is_tensor(init_transform):
            relative_transform = standard_transform_to_relative(init_transform)
        else:
            relative_transform = torch.zeros(3, 4, device=self.device, dtype=self.dtype)

        self.sim_obj_dict[self.current_id] = SimulatedObject(
            sim_object, self.current_id, num_qp, num_cp, relative_transform, is_kinematic)

        self.current_id += 1
        return self.current_id - 1

    def get_object_transforms(self, object_id):
        # Sets to the initial transforms
        tfms = torch.zeros(self.sim_obj_dict[object_id].num_handles, 3, 4, device=self.device, dtype=self.dtype)
        tfms[-1] = self.sim_obj_dict[object_id].init_transform.reshape(-1, 3, 4)

        # Pad with 0,0,0,1 rows to make each transform 4x4
        padding = torch.zeros(tfms.shape[0], 1, 4, device=self.device, dtype=self.dtype)
        padding[:, 0, 3] = 1.0
        padded_tfms = torch.cat([tfms, padding], dim=1)
        return padded_tfms


def main():
    rigid_obj_one = SimplicitsObject(num_handles=1)
    rigid_obj_two = SimplicitsObject(num_handles=1)

    scene = SimplicitsScene(device="cpu", dtype=torch.float32)

    transform = torch.tensor([[1, 0, 0, 0], [0, 1, 0, 10], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=torch.float32)
    id0 = scene.add_object(rigid_obj_one, init_transform=transform)
    id1 = scene.add_object(rigid_obj_two, init_transform=transform)

    tfms0 = scene.get_object_transforms(id0)
    tfms1 = scene.get_object_transforms(id1)
    return tfms0, tfms1


tfms0, tfms1 = main()
