#!/usr/bin/python3
"""The "ratio IoU" function from the PyTorch JIT / NNC (TensorExpr) fuser blog post.

Intersection over union of two sets of boxes given as (x, y, width, height),
elementwise over tensors.  examples/ratio_iou.ir is what PyTorch 1.13 prints
for torch.jit.script(ratio_iou).graph; tests/corpus/gen_corpus.py regenerates
it (run this file directly to print the graph).
"""
import torch


def ratio_iou(x1, y1, w1, h1, x2, y2, w2, h2):
    xi = torch.max(x1, x2)                                  # Intersection left
    yi = torch.max(y1, y2)                                  # Intersection top
    wi = torch.clamp(torch.min(x1+w1, x2+w2) - xi, min=0.)  # Intersection width
    hi = torch.clamp(torch.min(y1+h1, y2+h2) - yi, min=0.)  # Intersection height
    area_i = wi * hi                                        # Area Intersection
    area_u = w1 * h1 + w2 * h2 - wi * hi                    # Area Union
    return area_i / torch.clamp(area_u, min=1e-5)           # Intersection over Union


if __name__ == "__main__":
    print(torch.jit.script(ratio_iou).graph, end="")
