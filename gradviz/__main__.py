from gradviz.cli import main

raise SystemExit(main())
