# label: hazard raises
# why: the torch backend's slice_update wrote `inputs[slices] = updates` straight into its argument, which fails (in-place write to a leaf that requires grad) when gradients are needed for the input; the fix clones first.
# source: https://github.com/keras-team/keras-core/pull/405
import torch

torch.manual_seed(0)


def convert_to_tensor(x, dtype=None):
    if isinstance(x, torch.Tensor):
        return x
    return torch.as_tensor(x, dtype=dtype)


def slice_update(inputs, start_indices, updates):
    inputs = convert_to_tensor(inputs)
    start_indices = convert_to_tensor(start_indices).to(torch.int64)
    updates = convert_to_tensor(updates)

    python_slice = __builtins__["slice"] if isinstance(__builtins__, dict) else __builtins__.slice
    slices = [
        python_slice(start_index, start_index + update_length)
        for start_index, update_length in zip(start_indices.tolist(), updates.shape)
    ]
    inputs[slices] = updates  # <-- IPL003: in-place write into the caller's tensor, a leaf that requires grad
    return inputs


# a patch of a feature map is overwritten, and gradients are needed w.r.t. both tensors
feature_map = torch.randn(4, 6, requires_grad=True)
patch = torch.randn(2, 3, requires_grad=True)
out = slice_update(feature_map, [1, 2], patch)
loss = (out * out).sum()
loss.backward()
